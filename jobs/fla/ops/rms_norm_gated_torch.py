"""fla.modules.fused_norm_gate.rms_norm_gated, swish gate, no bias: rmsnorm(x) * weight * g *
sigmoid(g), in float32, rounded to the input's dtype. Case parameters: rows, cols, dtype."""
import torch

from fla_reference import norm_inputs, wide

CASES = [dict(rows=1023, cols=1024, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x, g, w, b):
        xf, gf = wide(x), wide(g)
        y = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6) * wide(w)
        return (y * gf * torch.sigmoid(gf)).to(x.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(rows=1023, cols=1024, dtype="bfloat16"):
    return norm_inputs(rows, cols, dtype, gate=True)
