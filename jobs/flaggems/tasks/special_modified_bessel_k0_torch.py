"""FlagGems `special_modified_bessel_k0` (aten::special_modified_bessel_k0), library-backed: the
reference is the ATen operator, the implementation (special_modified_bessel_k0_triton_impl.py) calls
flag_gems.special_modified_bessel_k0. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_special_modified_bessel_k0.py: utils.POINTWISE_SHAPES, [torch.float32, torch.float64].
Case parameters: dtype.

Fails on the device, attributed (library-defect, docs/LIBRARIES.md):
flag_gems/ops/special_modified_bessel_k0.py:97-107 (the large-x polynomial, off by up to 2.1e-3 on
(2, 3])."""
import torch

CASES = [dict(dtype="float32"), dict(dtype="float64")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.special_modified_bessel_k0.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
