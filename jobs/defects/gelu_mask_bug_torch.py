"""Defect fixture (a): GELU (tanh) whose kernel masks with a rounded-down bound.

Same reference as ops/gelu_tanh. The implementation's mask is `offs < (n // BLOCK) * BLOCK`, so
the tail of a size that is not a multiple of BLOCK = 1024 elements is never written (the output
buffer is zero-filled). Expected: the aligned case (64 x 4096) passes; every other case fails
with AccuracyError (over_count > 0: zeros where |golden| is far above the limit).
Case parameters: rows, cols, dtype.
"""
import torch

EXPECTED_ERROR_TYPE = "AccuracyError"

CASES = [
    dict(rows=64, cols=4096, dtype="float32"),   # 262144 = 256 * 1024: aligned, passes
    dict(rows=100, cols=1000, dtype="float32"),  # tail of 672 elements lost
    dict(rows=7, cols=1023, dtype="float32"),    # tail of 1017 elements lost
    dict(rows=1, cols=1000, dtype="float16"),    # smaller than one block: nothing written
    dict(rows=3, cols=4097, dtype="float32"),    # tail of 3 elements lost
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
