"""FlagGems `gcd` (aten::gcd), library-backed: the reference is the ATen operator, the implementation
(gcd_triton_impl.py) calls flag_gems.gcd. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_gcd.py: utils.POINTWISE_SHAPES, utils.ALL_INT_DTYPES. Case parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/gcd.py:189 (torch.gcd building the int16 lookup table; int16 inputs only)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="int16"), dict(dtype="int32"), dict(dtype="int64")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.gcd.default(x0, x1)


def get_init_inputs():
    return []


def get_inputs(dtype="int16"):
    dt = getattr(torch, dtype)
    return [torch.randint(-100, 100, (20, 320, 15), dtype=dt),
            torch.randint(-100, 100, (20, 320, 15), dtype=dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
