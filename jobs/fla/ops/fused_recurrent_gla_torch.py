"""fla.ops.gla.fused_recurrent_gla: the same GLA as chunk_gla, step by step in one kernel. Its
launcher sums the kernel's per-key-block outputs with torch (o.sum(0),
ops/common/fused_recurrent.py:467): LintError type 3. Case parameters: batch, seq, heads, dim, dtype."""
from fla_reference import Decayed, gla_inputs

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3
CASES = [dict(batch=2, seq=256, heads=4, dim=64, dtype="bfloat16")]


Model = Decayed


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=256, heads=4, dim=64, dtype="bfloat16"):
    return gla_inputs(batch, seq, heads, dim, dtype)
