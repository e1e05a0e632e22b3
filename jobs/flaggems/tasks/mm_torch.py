"""FlagGems `mm` (aten::mm), library-backed: the reference is the ATen operator, the implementation
(mm_triton_impl.py) calls flag_gems.mm. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_mm.py: FLOAT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.mm.default(x0, x1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((64, 96)).to(dt),
            torch.randn((96, 48)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
