"""FlagGems `special_log1p` (aten::special_log1p), library-backed: the reference is the ATen operator,
the implementation (special_log1p_triton_impl.py) calls flag_gems.special_log1p. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_special_log1p.py: utils.POINTWISE_SHAPES,
utils.FLOAT_DTYPES. Case parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/special_log1p.py:39 (torch.log when the argument is not a tensor; not taken for a
tensor, but the lint cannot know the argument's type)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.special_log1p.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
