"""FlagGems `bitwise_not` (aten::bitwise_not), library-backed: the reference is the ATen operator, the
implementation (bitwise_not_triton_impl.py) calls flag_gems.bitwise_not. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_bitwise_not.py: utils.POINTWISE_SHAPES,
utils.INT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="int16"), dict(dtype="int32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.bitwise_not.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="int16"):
    dt = getattr(torch, dtype)
    return [torch.randint(-100, 100, (20, 320, 15), dtype=dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
