"""FlagGems `mul` (aten::mul.Tensor), library-backed: the reference is the ATen operator, the
implementation (mul_triton_impl.py) calls flag_gems.mul. Written by tools/flaggems_tasks.py; inputs
from FlagGems' tests/test_mul.py: utils.POINTWISE_SHAPES, utils.FLOAT_DTYPES. Case parameters:
dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/mul.py:590, :735 (torch.ops.aten.mul redispatched to ATen for tensors off the device;
not taken here, but the lint cannot know the device)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.mul.Tensor(x0, x1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt),
            torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
