"""Defect fixture (g, hang): relu(x), float32, one case only.

The implementation's kernel runs a loop whose trip count is a runtime argument set to 2**62:
it never finishes, and synchronising on it blocks forever. Only a killable executor process with
a per-case timeout gets out of it. Expected: Timeout (one case, so one timeout's worth of wall
time).
Case parameters: rows, cols.
"""
import torch

EXPECTED_ERROR_TYPE = "Timeout"

CASES = [
    dict(rows=16, cols=1000),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_init_inputs():
    return []


def get_inputs(rows=16, cols=1000, dtype="float32"):
    x = torch.randn(rows, cols, dtype=torch.float32)
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
