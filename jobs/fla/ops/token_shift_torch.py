"""fla.modules.token_shift.token_shift: the previous time step minus this one, x[t-1] - x[t]
(zero before the first), over [B, T, D]. Case parameters: batch, seq, dim, dtype."""
import torch

from fla_reference import wide

CASES = [dict(batch=2, seq=500, dim=1024, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x):
        xf = wide(x)
        shifted = torch.zeros_like(xf)
        shifted[:, 1:] = xf[:, :-1]
        return (shifted - xf).to(x.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=500, dim=1024, dtype="bfloat16"):
    return [torch.randn(batch, seq, dim).to(getattr(torch, dtype))]
