"""FlagGems `binary_cross_entropy_with_logits` (aten::binary_cross_entropy_with_logits), library-
backed: the reference is the ATen operator, the implementation
(binary_cross_entropy_with_logits_triton_impl.py) calls flag_gems.binary_cross_entropy_with_logits.
Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_binary_cross_entropy_with_logits.py: utils.POINTWISE_SHAPES, utils.FLOAT_DTYPES. Case
parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/binary_cross_entropy_with_logits.py:116 (out.mean(), the mean reduction ATen's default
asks for)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.binary_cross_entropy_with_logits.default(x0, x1, None, None, 1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt),
            torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
