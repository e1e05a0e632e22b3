"""FlagGems `isin` (aten::isin.Tensor_Tensor), library-backed: the reference is the ATen operator, the
implementation (isin_triton_impl.py) calls flag_gems.isin. Written by tools/flaggems_tasks.py;
inputs from FlagGems' tests/test_isin.py: utils.SPECIAL_SHAPES, utils.INT_DTYPES. Case parameters:
dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/isin.py:227 and flag_gems/ops/unique.py:795 (torch.sort of the test elements)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="int16"), dict(dtype="int32")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.isin.Tensor_Tensor(x0, x1, assume_unique=False, invert=False)


def get_init_inputs():
    return []


def get_inputs(dtype="int16"):
    dt = getattr(torch, dtype)
    return [torch.randint(-100, 100, (20, 320, 15), dtype=dt),
            torch.randint(-100, 100, (20, 320, 15), dtype=dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
