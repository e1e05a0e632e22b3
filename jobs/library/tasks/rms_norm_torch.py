"""RMSNorm over the last dimension, statistics in float32, weight as an input:
x * rsqrt(mean(x^2) + 1e-6) * w. Case parameters: rows, cols, dtype."""
import torch

CASES = [dict(rows=33, cols=1000, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x, w):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * w.float()
        return y.to(x.dtype)


def get_init_inputs():
    return []


def get_inputs(rows=33, cols=1000, dtype="float16"):
    dt = getattr(torch, dtype)
    return [(torch.randn(rows, cols) * 2.0).to(dt), (torch.rand(cols) + 0.5).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
