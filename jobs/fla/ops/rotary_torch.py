"""fla.modules.rotary.rotary_embedding (not interleaved, the whole head rotated): x * cos +
rotate_half(x) * sin, cos and sin of [T, D/2] repeated over both halves; float32, rounded to the
input's dtype. Case parameters: batch, seq, heads, head_dim, dtype."""
import torch

from fla_reference import wide

CASES = [dict(batch=2, seq=500, heads=4, head_dim=128, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x, cos, sin):
        xf = wide(x)
        c = wide(torch.cat([cos, cos], -1))[None, :, None, :]
        s = wide(torch.cat([sin, sin], -1))[None, :, None, :]
        x1, x2 = xf.chunk(2, dim=-1)
        return (xf * c + torch.cat([-x2, x1], -1) * s).to(x.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=500, heads=4, head_dim=128, dtype="bfloat16"):
    dt = getattr(torch, dtype)
    inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.arange(seq).float()[:, None] * inv[None, :]
    return [torch.randn(batch, seq, heads, head_dim).to(dt), angles.cos().to(dt), angles.sin().to(dt)]
