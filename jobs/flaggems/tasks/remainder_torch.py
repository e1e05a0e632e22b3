"""FlagGems `remainder` (aten::remainder.Scalar), library-backed: the reference is the ATen operator,
the implementation (remainder_triton_impl.py) calls flag_gems.remainder. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_remainder.py: utils.POINTWISE_SHAPES,
utils.INT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="int16"), dict(dtype="int32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.remainder.Scalar(x0, 0.5)


def get_init_inputs():
    return []


def get_inputs(dtype="int16"):
    dt = getattr(torch, dtype)
    return [torch.randint(-100, 100, (20, 320, 15), dtype=dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
