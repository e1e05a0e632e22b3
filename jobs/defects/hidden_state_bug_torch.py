"""Defect fixture (e, hidden state): y = x * sigmoid(weight), weight a per-column gate.

The reference's weight is an nn.Parameter drawn with torch.randn in __init__ (under the seed the
verifier sets before building each model). The implementation builds its parameter of the same
name and shape with torch.rand instead, so the two models hold different hidden state whatever
the kernel does. Expected: HiddenStateMismatch (probe P1, before the first case's forward).
Case parameters: rows, dtype (HIDDEN = 1000 columns, fixed by get_init_inputs()).
"""
import torch

EXPECTED_ERROR_TYPE = "HiddenStateMismatch"

HIDDEN = 1000

CASES = [
    dict(rows=64, dtype="float32"),
    dict(rows=1023, dtype="float16"),
]


class Model(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randn(hidden))

    def forward(self, x):
        return x * torch.sigmoid(self.weight).to(x.dtype)


def get_init_inputs():
    return [HIDDEN]


def get_inputs(rows=64, dtype="float32"):
    x = torch.randn(rows, HIDDEN, dtype=torch.float32)
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
