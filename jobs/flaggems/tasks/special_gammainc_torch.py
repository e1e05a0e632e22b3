"""FlagGems `special_gammainc` (aten::special_gammainc), library-backed: the reference is the ATen
operator, the implementation (special_gammainc_triton_impl.py) calls flag_gems.special_gammainc.
Written by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_special_gammainc.py:
utils.POINTWISE_SHAPES, [torch.float32]. Case parameters: dtype.

Fails on the device, attributed (library-defect, docs/LIBRARIES.md):
flag_gems/ops/special_gammainc.py:120, :173 (the functional op launches into its out=None)."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.special_gammainc.default(x0, x1)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt),
            torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
