"""Elementwise operators: gelu (erf and tanh forms), silu, silu(a) * b, add with
broadcasting (up to 4 dimensions, broadcast dimensions as stride 0) and isclose.
Math in float32, results rounded once to the output dtype."""
import torch
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def _gelu_kernel(x_ptr, y_ptr, n, APPROX_TANH: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    if APPROX_TANH:
        u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
        t = 1.0 - 2.0 / (tl.exp(2.0 * u) + 1.0)  # tanh(u), saturating to +-1
        y = 0.5 * x * (1.0 + t)
    else:
        y = 0.5 * x * (1.0 + tl.erf(x * 0.7071067811865476))
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _silu_mul_kernel(a_ptr, b_ptr, y_ptr, n, HAS_B: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    y = a * tl.sigmoid(a)
    if HAS_B:
        y = y * tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _add_bcast_kernel(x_ptr, y_ptr, out_ptr, n, alpha,
                      d1, d2, d3,
                      xs0, xs1, xs2, xs3, ys0, ys1, ys2, ys3,
                      BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    i3 = offs % d3
    r = offs // d3
    i2 = r % d2
    r = r // d2
    i1 = r % d1
    i0 = r // d1
    x = tl.load(x_ptr + i0 * xs0 + i1 * xs1 + i2 * xs2 + i3 * xs3, mask=mask, other=0.0).to(tl.float32)
    y = tl.load(y_ptr + i0 * ys0 + i1 * ys1 + i2 * ys2 + i3 * ys3, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + offs, (x + alpha * y).to(out_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _isclose_kernel(a_ptr, b_ptr, out_ptr, n, rtol, atol, EQUAL_NAN: tl.constexpr, BLOCK: tl.constexpr):
    # ATen's isclose in the inputs' dtype, as torch 2's CPU computes it (the golden): each step
    # (a - b, rtol * b, atol + ...) is rounded to that dtype; rtol enters in float (mul keeps a
    # scalar in its opmath type), atol rounded to the dtype first (add casts the scalar to the
    # tensor's dtype). A bool verdict on the tolerance boundary is then torch's, in bfloat16 too
    # (tools/isclose_rounding.py measures which rounding a torch uses).
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    dt = a_ptr.dtype.element_ty
    a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    atol_dt = (tl.zeros_like(a) + atol).to(dt).to(tl.float32)
    actual = tl.abs((a - b).to(dt).to(tl.float32))
    allowed = (atol_dt + tl.abs((rtol * b).to(dt).to(tl.float32))).to(dt).to(tl.float32)
    close = (a == b) | ((actual < float("inf")) & (actual <= allowed))
    if EQUAL_NAN:
        close = close | ((a != a) & (b != b))
    tl.store(out_ptr + offs, close.to(tl.uint8), mask=mask)


def _grid(n):
    return (triton.cdiv(n, BLOCK),)


def gelu(x, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"opverify_testlib.gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    xc = x.contiguous()
    y = torch.empty_like(xc)
    if xc.numel():
        _gelu_kernel[_grid(xc.numel())](xc, y, xc.numel(), APPROX_TANH=approximate == "tanh", BLOCK=BLOCK)
    return y


def silu_mul(a, b=None):
    """silu(a) * b (the SwiGLU gate), or silu(a) when b is None."""
    ac = a.contiguous()
    if b is not None and b.shape != a.shape:
        raise ValueError(f"opverify_testlib.silu_mul: shapes differ: {tuple(a.shape)} and {tuple(b.shape)}")
    bc = b.contiguous() if b is not None else ac
    y = torch.empty_like(ac)
    if ac.numel():
        _silu_mul_kernel[_grid(ac.numel())](ac, bc, y, ac.numel(), HAS_B=b is not None, BLOCK=BLOCK)
    return y


def silu(x):
    return silu_mul(x)


def _strides4(t, shape):
    e = t.expand(shape)
    pad = 4 - len(shape)
    return [0] * pad + list(e.stride())


def add(x, y, alpha=1.0):
    """x + alpha * y with numpy broadcasting, for up to 4 dimensions, in the promoted dtype."""
    shape = list(torch.broadcast_shapes(x.shape, y.shape))
    if len(shape) > 4:
        raise ValueError(f"opverify_testlib.add: at most 4 dimensions, got {len(shape)}")
    dtype = torch.promote_types(x.dtype, y.dtype)
    out = torch.empty(shape, dtype=dtype, device=x.device)
    n = out.numel()
    if n:
        d = [1] * (4 - len(shape)) + shape
        _add_bcast_kernel[_grid(n)](x, y, out, n, float(alpha), d[1], d[2], d[3],
                                    *_strides4(x, shape), *_strides4(y, shape), BLOCK=BLOCK)
    return out


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    if a.shape != b.shape or a.dtype != b.dtype:
        raise ValueError(f"opverify_testlib.isclose: needs one shape and dtype, got {a.dtype} "
                         f"{tuple(a.shape)} and {b.dtype} {tuple(b.shape)}")
    ac, bc = a.contiguous(), b.contiguous()
    out = torch.empty(a.shape, dtype=torch.bool, device=a.device)
    if ac.numel():
        _isclose_kernel[_grid(ac.numel())](ac, bc, out.view(torch.uint8), ac.numel(), float(rtol), float(atol),
                                           EQUAL_NAN=bool(equal_nan), BLOCK=BLOCK)
    return out
