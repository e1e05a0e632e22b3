"""fla.modules.l2norm.l2norm: x / sqrt(sum(x^2) + eps) over the last dimension, in float32,
rounded to the input's dtype. Case parameters: rows, cols, dtype."""
import torch

from fla_reference import wide

CASES = [dict(rows=1023, cols=128, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x):
        xf = wide(x)
        return (xf * torch.rsqrt((xf * xf).sum(-1, keepdim=True) + 1e-6)).to(x.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(rows=1023, cols=128, dtype="bfloat16"):
    return [torch.randn(rows, cols).to(getattr(torch, dtype))]
