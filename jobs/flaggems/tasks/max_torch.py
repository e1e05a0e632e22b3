"""FlagGems `max` (aten::max), library-backed: the reference is the ATen operator, the implementation
(max_triton_impl.py) calls flag_gems.max. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_max.py: utils.REDUCTION_SHAPES, utils.ALL_INT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="int16"), dict(dtype="int32"), dict(dtype="int64")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.max.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="int16"):
    dt = getattr(torch, dtype)
    return [torch.randint(-100, 100, (4096, 256), dtype=dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
