"""FlagGems `special_bessel_j0` (aten::special_bessel_j0), library-backed: the reference is the ATen
operator, the implementation (special_bessel_j0_triton_impl.py) calls flag_gems.special_bessel_j0.
Written by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_special_bessel_j0.py:
POINTWISE_SHAPES, FLOAT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float32"), dict(dtype="float64")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.special_bessel_j0.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((2, 128, 128)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
