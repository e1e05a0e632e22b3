"""A cheat through the library's own torch custom operator: mul_custom_op launches a copy kernel
of the library's, and the product comes from `torch.ops.opverify_brokenlib.mul`, an operator the
library registers in its own namespace and implements with torch. A lint that does not follow
torch.ops.<namespace>.<op> to what is registered for it passes the launcher; opverify's follows it
(type 3), and the runtime dispatch trace sees aten::mul on the device."""
import torch
import triton

from .generated import _scale_kernel

_ops = torch.library.Library("opverify_brokenlib", "DEF")
_ops.define("mul(Tensor a, Tensor b) -> Tensor")


def _mul(a, b):
    return torch.mul(a, b)


_ops.impl("mul", _mul, "CompositeExplicitAutograd")


def mul_custom_op(a, b):
    out = torch.ops.opverify_brokenlib.mul(a, b).contiguous()
    result = torch.empty_like(out)
    _scale_kernel[(triton.cdiv(out.numel(), 1024),)](out, result, out.numel(), 1.0, BLOCK=1024)
    return result
