"""FlagGems `i0` (aten::i0), library-backed: the reference is the ATen operator, the implementation
(i0_triton_impl.py) calls flag_gems.i0. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_i0.py: I0_SHAPES, utils.FLOAT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.i0.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
