"""Library functions that hand part of their inputs to PyTorch's own compute: the classic
"fast path for the common case, torch for the rest" of a library under development."""
import torch
import triton
import triton.language as tl

SMALL = 1 << 16


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))).to(y_ptr.dtype.element_ty), mask=mask)


def gelu_small_fallback(x):
    """Triton for large tensors; small ones "are not worth a launch" and go to torch.
    The static lint sees torch.nn.functional.gelu reached from the implementation (type 3)."""
    if x.numel() < SMALL:
        return torch.nn.functional.gelu(x)
    xc = x.contiguous()
    y = torch.empty_like(xc)
    _gelu_kernel[(triton.cdiv(xc.numel(), 1024),)](xc, y, xc.numel(), BLOCK=1024)
    return y


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * n_cols + cols, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


_UNSUPPORTED = {torch.bfloat16}


def _reference_path(x, w, eps):
    # Written through getattr chains so that a static scan of names does not see torch compute:
    # only the trace of what the forward dispatches on the device does.
    xf = x.float()
    ms = getattr(xf, "pow")(2).mean(-1, keepdim=True)
    return (xf * getattr(torch, "rsqrt")(ms + eps) * w.float()).to(x.dtype)


def rms_norm_bf16_fallback(x, w, eps=1e-6):
    """Triton for float16 and float32; bfloat16 "is not supported yet" and goes to torch."""
    if x.dtype in _UNSUPPORTED:
        return _reference_path(x, w, eps)
    n = x.shape[-1]
    x2 = x.contiguous().view(-1, n)
    y = torch.empty_like(x2)
    block = max(16, triton.next_power_of_2(n))
    _rms_norm_kernel[(x2.shape[0],)](x2, w.contiguous(), y, n, float(eps), BLOCK=block, num_warps=8)
    return y.view(x.shape)
