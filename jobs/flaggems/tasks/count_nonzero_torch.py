"""FlagGems `count_nonzero` (aten::count_nonzero), library-backed: the reference is the ATen operator,
the implementation (count_nonzero_triton_impl.py) calls flag_gems.count_nonzero. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_count_nonzero.py: utils.REDUCTION_SHAPES,
FLOAT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.count_nonzero.default(x0, None)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((4096, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
