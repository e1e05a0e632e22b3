"""FlagGems `resize_as` (aten::resize_as), library-backed: the reference is the ATen operator, the
implementation (resize_as_triton_impl.py) calls flag_gems.resize_as. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_resize_as.py: utils.SPECIAL_SHAPES,
utils.FLOAT_DTYPES. Case parameters: dtype."""
import torch

NON_COMPUTE = True

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.resize_as.default(x0, x1, memory_format=None)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt),
            torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
