"""FlagGems `rot90` (aten::rot90), library-backed: the reference is the ATen operator, the
implementation (rot90_triton_impl.py) calls flag_gems.rot90. Written by tools/flaggems_tasks.py;
inputs from FlagGems' tests/test_rot90.py: ROT90_SHAPES_2D, utils.FLOAT_DTYPES. Case parameters:
dtype."""
import torch

NON_COMPUTE = True

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.rot90.default(x0, 1, [0, 1])


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((100, 128)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
