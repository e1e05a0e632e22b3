"""FlagGems `zero` (aten::zero), library-backed: the reference is the ATen operator, the implementation
(zero_triton_impl.py) calls flag_gems.zero. Written by tools/flaggems_tasks.py; inputs from
FlagGems' tests/test_zero.py: ZERO_SHAPES, utils.FLOAT_DTYPES. Case parameters: dtype.

Fails on the device, attributed (library-defect, docs/LIBRARIES.md): flag_gems/ops/zero.py:53, :73
(the functional aten::zero zeroes its input in place)."""
import torch

NON_COMPUTE = True

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.zero.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((128, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
