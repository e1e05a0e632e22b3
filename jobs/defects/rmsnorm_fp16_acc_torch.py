"""Defect fixture (b): RMSNorm over long rows (HIDDEN = 8192) whose kernel accumulates the sum of
squares in float16.

Same reference as ops/rmsnorm (float32 internally). x is randn * 4, so the sum of squares of a
row is about 131 000, past float16's largest finite value (65 504): a float16 running sum
overflows to +inf, rsqrt gives 0 and the whole row comes out as zeros. Expected: every case fails
with AccuracyError. (A float32 accumulator, as in ops/rmsnorm, passes on these inputs.)
Case parameters: rows, dtype, scale.
"""
import torch

EXPECTED_ERROR_TYPE = "AccuracyError"

HIDDEN = 8192
EPS = 1e-6

CASES = [
    dict(rows=16, dtype="float16"),
    dict(rows=64, dtype="float16"),
]


class Model(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.eps = EPS
        self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, hidden))

    def forward(self, x):
        xf = x.float()
        ms = xf.pow(2).mean(dim=-1, keepdim=True)
        y = xf * torch.rsqrt(ms + self.eps) * self.weight
        return y.to(x.dtype)


def get_init_inputs():
    return [HIDDEN]


def get_inputs(rows=16, dtype="float16", scale=4.0):
    x = torch.randn(rows, HIDDEN, dtype=torch.float32) * scale
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
