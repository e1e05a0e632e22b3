"""fla.ops.attn.parallel_attn: causal softmax attention with grouped query heads (8 query heads
over 2 key/value heads, query head h reading kv head h // 4), scale 1/sqrt(K), in float32.
Case parameters: batch, seq, heads, kv_heads, dim, dtype."""
import torch

from fla_reference import qkv, wide

CASES = [dict(batch=2, seq=256, heads=8, kv_heads=2, dim=64, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, q, k, v):
        group = q.shape[2] // k.shape[2]
        qf = wide(q).transpose(1, 2)
        kf = wide(k).repeat_interleave(group, dim=2).transpose(1, 2)
        vf = wide(v).repeat_interleave(group, dim=2).transpose(1, 2)
        scores = qf @ kf.transpose(-1, -2) * q.shape[-1] ** -0.5
        T = q.shape[1]
        scores = scores.masked_fill(torch.ones(T, T, dtype=torch.bool).triu(1), float("-inf"))
        return (torch.softmax(scores, -1) @ vf).transpose(1, 2).to(q.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=256, heads=8, kv_heads=2, dim=64, dtype="bfloat16"):
    return qkv(batch, seq, heads, dim, dtype, kv_heads)
