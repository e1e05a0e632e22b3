"""FlagGems `erf` (aten::erf), library-backed: the reference is the ATen operator, the implementation
(erf_triton_impl.py) calls flag_gems.erf. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_erf.py: utils.POINTWISE_SHAPES, utils.FLOAT_DTYPES. Case parameters: dtype. The reference
computes float16 and bfloat16 inputs in float32 and casts back, as FlagGems' test does (torch has no
half-precision kernel of it, or not on every device)."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        if x0.dtype in (torch.float16, torch.bfloat16):  # in float32, as FlagGems' test computes it
            return torch.ops.aten.erf.default(x0.float()).to(x0.dtype)
        return torch.ops.aten.erf.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
