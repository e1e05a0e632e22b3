"""ATen overrides that look installed and are not doing the work."""
import contextlib

import torch
import triton
import triton.language as tl

from opverify_testlib.ops import elementwise

from . import generated


@contextlib.contextmanager
def enabled_wrong_key():
    """gelu registered for the CPU dispatch key: the CUDA inputs never reach it, ATen's own
    CUDA gelu runs while the library believes it is enabled."""
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("gelu", lambda x, approximate="none": elementwise.gelu(x, approximate), "CPU")
    try:
        yield
    finally:
        lib._destroy()


def _install_silu():
    # The Library object is dropped when this returns, and with it the registration.
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("silu", lambda x: elementwise.silu(x), "CUDA")


def enable_dropped():
    """enable() of a library whose registration does not outlive the call."""
    _install_silu()


def disable_dropped():
    pass


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _softmax_decoy(x, dim, half_to_float):
    # ATen's amax, exp, sum and div do the work inside the override (reached through getattr,
    # out of a name scan's sight), where a dispatch trace of the caller does not look either;
    # a Triton copy of the result puts the library's kernel in the profile.
    xf = x.float()
    e = getattr(xf - getattr(xf, "amax")(dim, keepdim=True), "exp")()
    y = getattr(e, "div")(getattr(e, "sum")(dim, keepdim=True))
    y = y.to(torch.float32 if half_to_float else x.dtype).contiguous()
    out = torch.empty_like(y)
    _copy_kernel[(triton.cdiv(y.numel(), 1024),)](y, out, y.numel(), BLOCK=1024)
    return out


@contextlib.contextmanager
def enabled_decoy():
    lib = torch.library.Library("aten", "IMPL")
    lib.impl("_softmax", _softmax_decoy, "CUDA")
    try:
        yield
    finally:
        lib._destroy()


@contextlib.contextmanager
def _registered(op, fn):
    lib = torch.library.Library("aten", "IMPL")
    lib.impl(op, fn, "CUDA")
    try:
        yield
    finally:
        lib._destroy()


def enabled_generated():
    """silu through a module the library generates at run time: its wrapper computes with torch
    and its generated kernel copies the result out."""
    return _registered("silu", generated.silu_generated)


def enabled_tuned_fallback():
    """relu through the library's own launch wrapper, which computes with torch for inputs under
    65 536 elements."""
    return _registered("relu", generated.relu_tuned)


def enabled_copied():
    """tanh computed by torch below the dispatch trace, copied out by a library kernel."""
    return _registered("tanh", generated.tanh_copied)


def enabled_host():
    """tanh computed on the host with torch, copied back and out by a library kernel."""
    return _registered("tanh", generated.tanh_on_host)
