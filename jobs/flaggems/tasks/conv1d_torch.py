"""FlagGems `conv1d` (aten::conv1d), library-backed: the reference is the ATen operator, the
implementation (conv1d_triton_impl.py) calls flag_gems.conv1d. Written by tools/flaggems_tasks.py;
inputs from FlagGems' tests/test_conv1d.py: FLOAT_DTYPES. Case parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/conv2d.py:401-410 (torch.nn.functional.pad of the channels up to 16)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float32"), dict(dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.conv1d.default(x0, x1, None, [1], [0], [1], 1)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt),
            torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
