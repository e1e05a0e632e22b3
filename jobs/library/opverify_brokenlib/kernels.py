"""Kernels that are wrong in ways the aligned, single-seed test of a library's own CI misses."""
import torch
import triton
import triton.language as tl

from opverify_testlib.ops import norm

ALIGN = 128


@triton.jit
def _softmax_full_blocks_kernel(x_ptr, y_ptr, n_cols, n_full, BLOCK: tl.constexpr):
    # Walks the row in whole blocks only: right when n_cols % BLOCK == 0, and the tail
    # (n_cols - n_full elements) is left out of the max, the sum and the output.
    row = tl.program_id(0).to(tl.int64)
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    for start in range(0, n_full, BLOCK):
        m = tl.maximum(m, tl.load(x_ptr + row * n_cols + start + tl.arange(0, BLOCK)).to(tl.float32))
    row_max = tl.max(m, axis=0)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_full, BLOCK):
        s += tl.exp(tl.load(x_ptr + row * n_cols + start + tl.arange(0, BLOCK)).to(tl.float32) - row_max)
    total = tl.sum(s, axis=0)
    for start in range(0, n_full, BLOCK):
        offs = row * n_cols + start + tl.arange(0, BLOCK)
        y = tl.exp(tl.load(x_ptr + offs).to(tl.float32) - row_max) / total
        tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty))


def softmax_aligned_only(x):
    n = x.shape[-1]
    x2 = x.contiguous().view(-1, n)
    y = torch.zeros_like(x2)
    _softmax_full_blocks_kernel[(x2.shape[0],)](x2, y, n, n // ALIGN * ALIGN, BLOCK=ALIGN, num_warps=4)
    return y.view(x.shape)


_cache = {}


def layer_norm_cached(x, weight, bias, eps=1e-5):
    """Keeps the last result per (shape, dtype, eps) "for repeated calls in a training step":
    the key lacks the data, so a second call with new inputs of the same shape gets the first
    call's output."""
    key = (tuple(x.shape), x.dtype, float(eps), x.device)
    if key not in _cache:
        _cache[key] = norm.layer_norm(x, [x.shape[-1]], weight, bias, eps)
    return _cache[key]
