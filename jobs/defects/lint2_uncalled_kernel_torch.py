"""Defect fixture (d, lint type 2): row softmax (same reference as ops/softmax) whose
implementation defines a correct Triton kernel but forward() never launches it (it returns
torch.softmax). Expected: the static lint fails every case with regression type 2.
"""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 2

CASES = [
    dict(rows=128, cols=1000, dtype="float16"),
    dict(rows=16, cols=4097, dtype="float32"),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float16"):
    x = torch.randn(rows, cols, dtype=torch.float32) * 2.0
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
