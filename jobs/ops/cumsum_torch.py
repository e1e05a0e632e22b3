"""Inclusive cumulative sum along the last dimension, float32 (torch.cumsum(x, dim=-1)).

Inputs are uniform in [0, 1) so that the running sums grow monotonically (well conditioned).
Case parameters: rows, cols, dtype (only "float32" is in the cases).
"""
import torch

CASES = [
    dict(rows=1, cols=1),
    dict(rows=128, cols=1000),
    dict(rows=64, cols=1023),
    dict(rows=16, cols=4097),
    dict(rows=32, cols=4096),
    dict(rows=4, cols=20000),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.cumsum(x, dim=-1)


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float32"):
    x = torch.rand(rows, cols, dtype=torch.float32)
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
