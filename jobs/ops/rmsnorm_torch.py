"""RMSNorm over the last dimension (HIDDEN = 4097 columns, fixed by get_init_inputs()).

Reference in the common LLM style: upcast to float32, x * rsqrt(mean(x^2) + eps) * weight, then
round once to the input dtype. weight is an nn.Parameter initialised with torch.linspace.
One case scales x by 4 so that the sum of squares (~65 500) would overflow a float16
accumulator; a correct kernel accumulates in float32 and passes.

Case parameters: rows, dtype ("float16" | "bfloat16" | "float32"), scale (multiplies x).
"""
import torch

HIDDEN = 4097
EPS = 1e-6

CASES = [
    dict(rows=1, dtype="float16"),
    dict(rows=64, dtype="float16"),
    dict(rows=1023, dtype="float16"),
    dict(rows=64, dtype="float16", scale=4.0),
    dict(rows=64, dtype="bfloat16"),
    dict(rows=64, dtype="float32"),
    dict(rows=255, dtype="float32"),
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


def get_inputs(rows=64, dtype="float16", scale=1.0):
    x = torch.randn(rows, HIDDEN, dtype=torch.float32) * scale
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
