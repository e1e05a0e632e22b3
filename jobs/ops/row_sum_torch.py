"""Sum over the last dimension (torch.sum(x, dim=-1)); output in the input dtype.

A correct kernel accumulates in float32 for float16/bfloat16 input, as PyTorch does.
Case parameters: rows, cols, dtype ("float16" | "bfloat16" | "float32").
"""
import torch

CASES = [
    dict(rows=1, cols=1, dtype="float16"),
    dict(rows=128, cols=1000, dtype="float16"),
    dict(rows=64, cols=1023, dtype="float16"),
    dict(rows=16, cols=4097, dtype="float16"),
    dict(rows=32, cols=4096, dtype="float16"),
    dict(rows=8, cols=65536, dtype="float16"),
    dict(rows=128, cols=1000, dtype="bfloat16"),
    dict(rows=16, cols=4097, dtype="bfloat16"),
    dict(rows=128, cols=1000, dtype="float32"),
    dict(rows=16, cols=4097, dtype="float32"),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.sum(x, dim=-1)


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float16"):
    x = torch.randn(rows, cols, dtype=torch.float32)
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
