"""FlagGems `linalg_lu` (aten::linalg_lu), library-backed: the reference is the ATen operator, the
implementation (linalg_lu_triton_impl.py) calls flag_gems.linalg_lu. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_linalg_lu.py: _LU_SHAPES, _TEST_DTYPES.
Case parameters: dtype."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.linalg_lu.default(x0, pivot=True)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((64, 128)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
