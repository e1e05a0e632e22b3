"""fla.ops.retention.chunk_retention: retention, a fixed decay per head gamma_h = 1 - 2^(-5 - h), as
chunk_simple_gla with g = log(gamma). Its launcher computes the decays with torch
(ops/retention/chunk.py:68): LintError type 3. Case parameters: batch, seq, heads, dim, dtype.
bfloat16 only: a float32 case under precision_mode tf32 is out of any TF32 computation's reach: the
reference itself, on its inputs rounded once to TF32, matches 0.944 of the golden's elements, below
eco's 0.99 (tests/python/test_fla.py, the tf32 tests)."""
import torch

from fla_reference import qkv, recurrence

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3
CASES = [dict(batch=2, seq=256, heads=4, dim=64, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, q, k, v):
        B, T, H = q.shape[:3]
        gamma = 1 - 2.0 ** (-5.0 - torch.arange(H, dtype=torch.float64))
        return recurrence(q, k, v, decay=gamma.log().expand(B, T, H)).to(q.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=256, heads=4, dim=64, dtype="bfloat16"):
    return qkv(batch, seq, heads, dim, dtype)
