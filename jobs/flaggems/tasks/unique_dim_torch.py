"""FlagGems `unique_dim` (aten::unique_dim), library-backed: the reference is the ATen operator, the
implementation (unique_dim_triton_impl.py) calls flag_gems.unique_dim. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_unique_dim.py: utils.INT_DTYPES. Case
parameters: dtype. `return_inverse=True` against the schema's default: every output a defined tensor
to compare. `return_counts=True` against the schema's default: every output a defined tensor to
compare.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/unique_dim.py:539-845 (torch.sort, cat, cumsum, nonzero)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="int16"), dict(dtype="int32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.unique_dim.default(x0, -1, True, True, True)


def get_init_inputs():
    return []


def get_inputs(dtype="int16"):
    dt = getattr(torch, dtype)
    return [torch.randint(-100, 100, (20, 320, 15), dtype=dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
