"""Defect fixture (d, lint type 4): the average (x + y) * 0.5, float16/float32.

The implementation computes the result with Python operators on tensors (no torch.* call and no
tensor method, so a type-3 scan of calls sees nothing) and launches only a placeholder kernel that
copies it with tl.load/tl.store. The numbers are right.
Expected: the static lint fails every case with regression type 4.
Case parameters: rows, cols, dtype.
"""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 4

CASES = [
    dict(rows=128, cols=1000, dtype="float16"),
    dict(rows=3, cols=4097, dtype="float32"),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return (x + y) * 0.5


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float16"):
    x = torch.randn(rows, cols, dtype=torch.float32)
    y = torch.randn(rows, cols, dtype=torch.float32)
    dt = getattr(torch, dtype)
    return [x.to(dt), y.to(dt)]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
