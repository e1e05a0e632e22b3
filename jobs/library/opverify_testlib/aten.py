"""ATen overrides: the library's kernels installed for CUDA tensors through torch.library,
in place of ATen's own, while enabled. Either `with enabled(): ...` or enable() ... disable().

Overridden: _softmax, gelu, silu, native_layer_norm, sum.dim_IntList, mean.dim,
prod.dim_int, cumsum, mm, isclose. Leaving the context removes the registrations and
ATen's kernels are back."""
import contextlib

import torch

from .ops import elementwise, matmul, norm, reduction

_FLOATS = (torch.float16, torch.bfloat16, torch.float32)
_active = None


def _softmax(x, dim, half_to_float):
    return reduction.softmax(x, dim, torch.float32 if half_to_float else None)


def _gelu(x, approximate="none"):
    return elementwise.gelu(x, approximate)


def _silu(x):
    return elementwise.silu(x)


def _native_layer_norm(x, normalized_shape, weight, bias, eps):
    return norm.layer_norm_stats(x, normalized_shape, weight, bias, eps)


def _sum(x, dim=None, keepdim=False, dtype=None):
    return reduction.sum_dim(x, dim, keepdim, dtype)


def _mean(x, dim=None, keepdim=False, dtype=None):
    return reduction.mean_dim(x, dim, keepdim, dtype)


def _prod(x, dim, keepdim=False, dtype=None):
    return reduction.prod_dim(x, dim, keepdim, dtype)


def _cumsum(x, dim, dtype=None):
    return reduction.cumsum(x, dim, dtype)


def _mm(a, b):
    return matmul.matmul(a, b)


def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return elementwise.isclose(a, b, rtol, atol, equal_nan)


OVERRIDES = {
    "_softmax": _softmax,
    "gelu": _gelu,
    "silu": _silu,
    "native_layer_norm": _native_layer_norm,
    "sum.dim_IntList": _sum,
    "mean.dim": _mean,
    "prod.dim_int": _prod,
    "cumsum": _cumsum,
    "mm": _mm,
    "isclose": _isclose,
}


def _register():
    lib = torch.library.Library("aten", "IMPL")
    for name, fn in OVERRIDES.items():
        lib.impl(name, fn, "CUDA")
    return lib


def enable():
    """Installs the overrides until disable(); a second enable() is a no-op."""
    global _active
    if _active is None:
        _active = _register()


def disable():
    global _active
    if _active is not None:
        _active._destroy()
        _active = None


@contextlib.contextmanager
def enabled():
    """The overrides installed inside the `with` block only (nesting with enable() is fine)."""
    lib = _register()
    try:
        yield
    finally:
        lib._destroy()
