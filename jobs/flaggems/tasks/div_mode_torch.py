"""FlagGems `div_mode` (aten::div.Scalar_mode), library-backed: the reference is the ATen operator, the
implementation (div_mode_triton_impl.py) calls flag_gems.div_mode. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_div.py: utils.POINTWISE_SHAPES,
utils.FLOAT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.div.Scalar_mode(x0, 0.5, rounding_mode=None)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
