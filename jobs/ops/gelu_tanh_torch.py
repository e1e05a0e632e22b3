"""GELU with the tanh approximation, elementwise; float16, bfloat16 and float32.

Case parameters (keywords of get_inputs): rows, cols, dtype ("float16" | "bfloat16" | "float32").
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

    def forward(self, x):
        return torch.nn.functional.gelu(x, approximate="tanh")


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float16"):
    x = torch.randn(rows, cols, dtype=torch.float32) * 2.0
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
