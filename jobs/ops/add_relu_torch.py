"""Fused relu(x + y) whose inputs hold NaN and +-Inf at fixed positions.

NaN must propagate (relu(NaN) is NaN in PyTorch), +Inf stays +Inf and -Inf becomes 0, so the
judge's NaN/Inf position checks are exercised on an operator that passes.
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
        return torch.relu(x + y)


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float16"):
    x = torch.randn(rows, cols, dtype=torch.float32)
    y = torch.randn(rows, cols, dtype=torch.float32)
    flat = x.view(-1)
    flat[::37] = float("nan")
    flat[5::41] = float("inf")
    flat[11::43] = float("-inf")
    dt = getattr(torch, dtype)
    return [x.to(dt), y.to(dt)]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
