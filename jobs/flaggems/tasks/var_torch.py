"""FlagGems `var` (aten::var), library-backed: the reference is the ATen operator, the implementation
(var_triton_impl.py) calls flag_gems.var. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_var.py: utils.REDUCTION_SHAPES, FLOAT_DTYPES. Case parameters: dtype.

Fails on the device, attributed (library-defect, docs/LIBRARIES.md): flag_gems/ops/var.py:135-140
(registered for aten::var(Tensor, bool unbiased) with var.correction's signature: unbiased becomes
dim)."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.var.default(x0, True)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((4096, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
