"""FlagGems `special_shifted_chebyshev_polynomial_u` (aten::special_shifted_chebyshev_polynomial_u),
library-backed: the reference is the ATen operator, the implementation
(special_shifted_chebyshev_polynomial_u_triton_impl.py) calls
flag_gems.special_shifted_chebyshev_polynomial_u. Written by tools/flaggems_tasks.py; inputs from
FlagGems' tests/test_special_shifted_chebyshev_polynomial_u.py: utils.POINTWISE_SHAPES,
[torch.float32]. Case parameters: dtype. The degree `n` is a whole number 0-9, as in FlagGems'
tests.

Fails on the device, attributed (library-defect, docs/LIBRARIES.md):
flag_gems/ops/special_shifted_chebyshev_polynomial_u.py:41-42, :65 (2x - 1 clamped to [-1, 1])."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.special_shifted_chebyshev_polynomial_u.default(x0, x1)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt),
            torch.randint(0, 10, (20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
