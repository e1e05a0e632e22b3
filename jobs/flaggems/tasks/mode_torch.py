"""FlagGems `mode` (aten::mode), library-backed: the reference is the ATen operator, the implementation
(mode_triton_impl.py) calls flag_gems.mode. Written by tools/flaggems_tasks.py; inputs from
FlagGems' tests/test_mode.py: utils.REDUCTION_SMALL_SHAPES, FLOAT_DTYPES. Case parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/sort.py:292 (through its sort: torch.cumsum of the radix sort's bin histogram)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.mode.default(x0, -1, False)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((4096, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
