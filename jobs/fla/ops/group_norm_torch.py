"""fla.modules.layernorm.group_norm with 4 groups over the last dimension: each group of cols/4
contiguous channels normalised on its own, then weight and bias per channel; float32, rounded
to the input's dtype. Case parameters: rows, cols, dtype."""
import torch

from fla_reference import norm_inputs, normalized, wide

CASES = [dict(rows=1023, cols=1024, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x, w, b):
        y = normalized(x.reshape(x.shape[0], 4, x.shape[1] // 4), 1e-5).reshape(x.shape)
        return (y * wide(w) + wide(b)).to(x.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(rows=1023, cols=1024, dtype="bfloat16"):
    return norm_inputs(rows, cols, dtype)
