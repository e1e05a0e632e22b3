"""fla.modules.layernorm.layer_norm: (x - mean) * rsqrt(var + eps) * weight + bias (biased
variance), in float32, rounded to the input's dtype. Case parameters: rows, cols, dtype."""
import torch

from fla_reference import norm_inputs, normalized, wide

CASES = [dict(rows=1023, cols=1024, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x, w, b):
        return (normalized(x, 1e-5) * wide(w) + wide(b)).to(x.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(rows=1023, cols=1024, dtype="bfloat16"):
    return norm_inputs(rows, cols, dtype)
