"""fla.ops.delta_rule.chunk_delta_rule: the delta rule, S_t = S_{t-1} + k_t (beta_t (v_t - S_{t-1}^T
k_t))^T, o_t = q_t S_t / sqrt(K), keys L2-normalised, against the step-by-step recurrence in
float32. Case parameters: batch, seq, heads, dim, dtype. bfloat16 only: fla's chunk_delta_rule
refuses float32 inputs by design (`assert q.dtype != torch.float32`, fla/ops/delta_rule/chunk.py:303)."""
from fla_reference import DeltaRule, delta_inputs

CASES = [dict(batch=2, seq=256, heads=4, dim=64, dtype="bfloat16")]


Model = DeltaRule


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=256, heads=4, dim=64, dtype="bfloat16"):
    return delta_inputs(batch, seq, heads, dim, dtype)
