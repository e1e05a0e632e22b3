"""FlagGems `var_dim` (aten::var.dim), library-backed: the reference is the ATen operator, the
implementation (var_dim_triton_impl.py) calls flag_gems.var_dim. Written by tools/flaggems_tasks.py;
inputs from FlagGems' tests/test_var.py: utils.REDUCTION_SHAPES, FLOAT_DTYPES. Case parameters:
dtype.

Fails on the device, attributed (library-defect, docs/LIBRARIES.md): flag_gems/ops/var.py:175
(registered for aten::var.dim with var.correction's keyword-only signature)."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.var.dim(x0, [-1], True, False)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((4096, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
