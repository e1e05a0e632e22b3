"""Defect fixture (d, lint type 3, helper): relu(A @ B), float16.

The implementation launches a real relu kernel, but the matrix product is done by torch.matmul
inside a module-level helper that forward() calls: only a lint that follows calls from forward()
into module-level helpers catches it. The numbers are right.
Expected: the static lint fails every case with regression type 3.
Case parameters: M, N, K, dtype.
"""
import math

import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [
    dict(M=128, N=128, K=128),
    dict(M=100, N=1023, K=257),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.relu(torch.matmul(a, b))


def get_init_inputs():
    return []


def get_inputs(M=128, N=128, K=128, dtype="float16"):
    a = torch.randn(M, K, dtype=torch.float32)
    b = torch.randn(K, N, dtype=torch.float32) / math.sqrt(K)
    dt = getattr(torch, dtype)
    return [a.to(dt), b.to(dt)]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
