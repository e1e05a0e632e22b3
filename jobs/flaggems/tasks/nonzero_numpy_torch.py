"""FlagGems `nonzero_numpy` (aten::nonzero_numpy), library-backed: the reference is the ATen operator,
the implementation (nonzero_numpy_triton_impl.py) calls flag_gems.nonzero_numpy. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_nonzero_numpy.py: NONZERO_SHAPES,
FLOAT_DTYPES. Case parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/nonzero.py:74 (the prefix sum by the tensor method cumsum)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.nonzero_numpy.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((4096, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
