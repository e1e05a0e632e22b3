"""FlagGems `slice_scatter` (aten::slice_scatter), library-backed: the reference is the ATen operator,
the implementation (slice_scatter_triton_impl.py) calls flag_gems.slice_scatter. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_slice_scatter.py: FLOAT_DTYPES. Case
parameters: dtype."""
import torch

NON_COMPUTE = True

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.slice_scatter.default(x0, x1, 0, None, None, 1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt),
            torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
