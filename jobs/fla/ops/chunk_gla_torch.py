"""fla.ops.gla.chunk_gla: gated linear attention with a log decay per key channel, o_t = q_t S_t /
sqrt(K), S_t = diag(exp(g_t)) S_{t-1} + k_t v_t^T, against the step-by-step recurrence in float32.
Case parameters: batch, seq, heads, dim, dtype. bfloat16 only: a float32 case under precision_mode
tf32 is out of any TF32 computation's reach: the reference itself, on its inputs rounded once to
TF32, matches 0.971 of the golden's elements, below eco's 0.99 (tests/python/test_fla.py, the tf32
tests; fla's own kernels matched 0.924 on the H100)."""
from fla_reference import Decayed, gla_inputs

CASES = [dict(batch=2, seq=256, heads=4, dim=64, dtype="bfloat16")]


Model = Decayed


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=256, heads=4, dim=64, dtype="bfloat16"):
    return gla_inputs(batch, seq, heads, dim, dtype)
