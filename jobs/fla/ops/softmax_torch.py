"""fla.ops.utils.softmax.softmax_fwd: softmax over the last dimension, float32 out.
Case parameters: rows, cols, dtype."""
import torch

from fla_reference import wide

CASES = [dict(rows=1023, cols=1000, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(wide(x), -1)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(rows=1023, cols=1000, dtype="bfloat16"):
    return [(torch.randn(rows, cols) * 3.0).to(getattr(torch, dtype))]
