"""FlagGems `cholesky_inverse` (aten::cholesky_inverse), library-backed: the reference is the ATen
operator, the implementation (cholesky_inverse_triton_impl.py) calls flag_gems.cholesky_inverse.
Written by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_cholesky_inverse.py:
CHOLESKY_INVERSE_SHAPES, [torch.float32, torch.float64]. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float32"), dict(dtype="float64")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.cholesky_inverse.default(x0, False)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((32, 32)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
