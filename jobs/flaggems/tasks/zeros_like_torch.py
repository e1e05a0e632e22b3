"""FlagGems `zeros_like` (aten::zeros_like), library-backed: the reference is the ATen operator, the
implementation (zeros_like_triton_impl.py) calls flag_gems.zeros_like. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_zeros_like.py: utils.POINTWISE_SHAPES,
utils.FLOAT_DTYPES. Case parameters: dtype."""
import torch

NON_COMPUTE = True

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.zeros_like.default(x0, dtype=None, layout=None, device=None, pin_memory=None, memory_format=None)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
