"""Row softmax, torch.softmax(x, dim=-1); library-backed implementation opverify_testlib.softmax.
Case parameters: rows, cols, dtype."""
import torch

CASES = [dict(rows=33, cols=1000, dtype="float16"), dict(rows=16, cols=4097, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_init_inputs():
    return []


def get_inputs(rows=33, cols=1000, dtype="float16"):
    return [(torch.randn(rows, cols) * 2.0).to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
