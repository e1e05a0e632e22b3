"""Defect of library form: a softmax kernel that walks rows in whole blocks of 128 and drops
the tail. Right on aligned sizes (cols % 128 == 0: those cases pass), wrong on the others
(AccuracyError). The sweep in the manifest has both. Case parameters: rows, cols, dtype."""
import torch

EXPECTED_ERROR_TYPE = "AccuracyError"
CASES = [dict(rows=16, cols=1024, dtype="float16"), dict(rows=16, cols=1000, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_init_inputs():
    return []


def get_inputs(rows=16, cols=1024, dtype="float16"):
    return [(torch.randn(rows, cols) * 2.0).to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
