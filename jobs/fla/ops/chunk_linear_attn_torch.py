"""fla.ops.linear_attn.chunk_linear_attn, not normalised: o_t = q_t (sum_{s<=t} k_s v_s^T) / sqrt(K),
against the step-by-step recurrence in float32. Case parameters: batch, seq, heads, dim, dtype.
bfloat16 only: a float32 case under precision_mode tf32 is out of any TF32 computation's reach: the
reference itself, on its inputs rounded once to TF32, matches 0.977 of the golden's elements, below
eco's 0.99 (tests/python/test_fla.py, the tf32 tests; fla's own kernels matched 0.929 on the H100)."""
import torch

from fla_reference import qkv, recurrence

CASES = [dict(batch=2, seq=256, heads=4, dim=64, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, q, k, v):
        return recurrence(q, k, v).to(q.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=256, heads=4, dim=64, dtype="bfloat16"):
    q, k, v = qkv(batch, seq, heads, dim, dtype)
    return [q, k / 4, v]
