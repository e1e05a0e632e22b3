"""Cheats of the forms a code-generating, self-tuning library takes (FlagGems' pointwise code
generator, its LibEntry/LibTuner launch wrappers), each launching a kernel of the library's own
so that "a library kernel ran" holds while torch does the work."""
import importlib.util
import os
import tempfile

import torch
import triton
import triton.language as tl

_GENERATED = '''import torch
import triton
import triton.language as tl


@triton.jit
def _gen_scale_kernel(src_ptr, dst_ptr, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(src_ptr + offs, mask=mask).to(tl.float32)
    tl.store(dst_ptr + offs, (x * scale).to(dst_ptr.dtype.element_ty), mask=mask)


def silu_wrapper(x):
    # generated "kernel wrapper": torch computes, the generated kernel copies the result out
    # (times 1.0: arithmetic for show)
    y = (x * torch.sigmoid(x)).contiguous()
    out = torch.empty_like(y)
    _gen_scale_kernel[(triton.cdiv(y.numel(), 1024),)](y, out, y.numel(), 1.0, BLOCK=1024)
    return out
'''

_wrappers = {}


def _generated_module():
    """Writes the module into a cache folder (outside the import path) and imports it by file,
    as a code generator does."""
    if "module" not in _wrappers:
        folder = tempfile.mkdtemp(prefix="opverify_brokenlib_gen_")
        path = os.path.join(folder, "silu_rank_any.py")
        with open(path, "w") as f:
            f.write(_GENERATED)
        spec = importlib.util.spec_from_file_location("_opverify_brokenlib_gen_silu", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _wrappers["module"] = module
    return _wrappers["module"]


def silu_generated(x):
    return _generated_module().silu_wrapper(x)


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(y_ptr + offs, tl.where(x > 0, x, 0), mask=mask)


class TunedLaunch:
    """A launch wrapper of the library's own (as an autotuner or launch cache would be): for
    "small" inputs it skips the kernel and computes with torch instead, "where launching does
    not pay"."""

    SMALL = 65536

    def __init__(self, kernel):
        self.kernel = kernel

    def __getitem__(self, grid):
        def launch(x, y, n, BLOCK):
            if n < self.SMALL:
                torch.clamp_min(x, 0, out=y)
                return
            self.kernel[grid](x, y, n, BLOCK=BLOCK)
        return launch


_relu_tuned = TunedLaunch(_relu_kernel)


def relu_tuned(x):
    x = x.contiguous()
    y = torch.empty_like(x)
    _relu_tuned[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y


@triton.jit
def _scale_kernel(src_ptr, dst_ptr, n, scale, BLOCK: tl.constexpr):
    # times 1.0 at the call sites: the arithmetic is for show, the result is torch's
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(src_ptr + offs, mask=mask).to(tl.float32)
    tl.store(dst_ptr + offs, (x * scale).to(dst_ptr.dtype.element_ty), mask=mask)


def mul_aten_ops(a, b):
    """Launches a copy kernel of the library's, and multiplies through torch.ops.aten."""
    out = torch.ops.aten.mul.Tensor(a, b).contiguous()
    result = torch.empty_like(out)
    _scale_kernel[(triton.cdiv(out.numel(), 1024),)](out, result, out.numel(), 1.0, BLOCK=1024)
    return result


def _below_the_trace():
    """A guard under which torch's operators skip the Python dispatch key, where dispatch modes
    (a tracer) live: the operators still run on the device, only the profile sees them."""
    guard = getattr(torch._C, "_ExcludeDispatchKeyGuard", None)
    keys = getattr(torch._C, "DispatchKeySet", None)
    if guard is None or keys is None:
        import contextlib
        return contextlib.nullcontext()
    hidden = keys(torch._C.DispatchKey.Python) | keys(torch._C.DispatchKey.PythonTLSSnapshot)
    return guard(hidden)


def tanh_copied(x):
    """tanh computed by torch out of the tracer's sight (exp, add, sub, div, by the formula
    (e^2x - 1) / (e^2x + 1)), copied out by a library kernel."""
    with _below_the_trace():
        e = torch.exp(x.float() * 2)
        y = ((e - 1) / (e + 1)).to(x.dtype).contiguous()
    out = torch.empty_like(y)
    _scale_kernel[(triton.cdiv(y.numel(), 1024),)](y, out, y.numel(), 1.0, BLOCK=1024)
    return out


def tanh_on_host(x):
    """tanh computed by torch on the host (the device data copied over, the result copied back)
    and copied out by a library kernel: no torch compute operator touches the device."""
    y = torch.tanh(x.cpu()).to(x.device).contiguous()
    out = torch.empty_like(y)
    _scale_kernel[(triton.cdiv(y.numel(), 1024),)](y, out, y.numel(), 1.0, BLOCK=1024)
    return out
