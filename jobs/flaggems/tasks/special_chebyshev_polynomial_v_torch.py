"""FlagGems `special_chebyshev_polynomial_v` (aten::special_chebyshev_polynomial_v), library-backed:
the reference is the ATen operator, the implementation
(special_chebyshev_polynomial_v_triton_impl.py) calls flag_gems.special_chebyshev_polynomial_v.
Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_special_chebyshev_polynomial_v.py: utils.POINTWISE_SHAPES, [torch.float32]. Case
parameters: dtype. The degree `n` is a whole number 0-9, as in FlagGems' tests.

Fails on the device, attributed (library-defect, docs/LIBRARIES.md):
flag_gems/ops/special_chebyshev_polynomial_v.py:31-34 (acos: NaN for |x| > 1)."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.special_chebyshev_polynomial_v.default(x0, x1)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt),
            torch.randint(0, 10, (20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
