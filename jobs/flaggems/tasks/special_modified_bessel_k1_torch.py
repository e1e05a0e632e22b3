"""FlagGems `special_modified_bessel_k1` (aten::special_modified_bessel_k1), library-backed: the
reference is the ATen operator, the implementation (special_modified_bessel_k1_triton_impl.py) calls
flag_gems.special_modified_bessel_k1. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_special_modified_bessel_k1.py: utils.POINTWISE_SHAPES, [torch.float32]. Case parameters:
dtype.

Fails on the device, attributed (library-defect, docs/LIBRARIES.md):
flag_gems/ops/special_modified_bessel_k1.py:61 (5/6 for 5/4 in the series), :74-87 (a 4% asymptotic
blend)."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.special_modified_bessel_k1.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
