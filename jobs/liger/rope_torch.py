"""Liger-Kernel rope_forward (rotary position embedding of q and k, the HF
apply_rotary_pos_emb with rotate_half) on q [batch, heads, seq, head_dim] and k with fewer
(grouped) heads; cos and sin [1, seq, head_dim]. Two outputs. Case parameters: seq, head_dim, dtype."""
import torch
import torch.nn.functional as F

CASES = [dict(seq=33, head_dim=64, dtype="float16")]


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class Model(torch.nn.Module):
    def forward(self, q, k, cos, sin):
        c, s = cos.unsqueeze(1), sin.unsqueeze(1)
        return q * c + rotate_half(q) * s, k * c + rotate_half(k) * s


def get_init_inputs():
    return []


def get_inputs(seq=33, head_dim=64, dtype="float16"):
    dt = getattr(torch, dtype)
    pos = torch.arange(seq, dtype=torch.float32)
    inv = 1.0 / (10000 ** (torch.arange(0, head_dim, 2, dtype=torch.float32) / head_dim))
    emb = torch.cat([torch.outer(pos, inv)] * 2, dim=-1)
    return [torch.randn(2, 8, seq, head_dim).to(dt), torch.randn(2, 2, seq, head_dim).to(dt),
            emb.cos()[None].to(dt), emb.sin()[None].to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
