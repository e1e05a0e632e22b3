"""Elementwise comparison x > y with a bool output (torch.gt).

Every 7th element of y equals x (the answer there is False) and every 50th element of x is NaN
(NaN > y is False), so exact equality of the bool outputs is a real test.
Case parameters: rows, cols, dtype ("float16" | "bfloat16" | "float32").
"""
import torch

CASES = [
    dict(rows=rows, cols=cols, dtype=dtype)
    for dtype in ("float16", "bfloat16", "float32")
    for rows, cols in ((1, 1), (128, 1000), (7, 1023), (3, 4097), (64, 4096))
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return torch.gt(x, y)


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float16"):
    x = torch.randn(rows, cols, dtype=torch.float32)
    y = torch.randn(rows, cols, dtype=torch.float32)
    y.view(-1)[::7] = x.view(-1)[::7]
    x.view(-1)[3::50] = float("nan")
    dt = getattr(torch, dtype)
    return [x.to(dt), y.to(dt)]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
