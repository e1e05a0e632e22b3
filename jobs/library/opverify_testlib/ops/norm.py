"""Normalisations over the trailing dimensions: layer_norm (mean and biased variance)
and rms_norm. One program per row, the row walked in blocks; statistics in float32."""
import torch
import triton
import triton.language as tl

from .._launch import row_block, warps_for


@triton.jit
def _layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, mean_ptr, rstd_ptr, n_cols, eps,
                       HAS_W: tl.constexpr, HAS_B: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        d = tl.where(mask, tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        y = (tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) - mean) * rstd
        if HAS_W:
            y = y * tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        if HAS_B:
            y = y + tl.load(b_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _rms_norm_kernel(x_ptr, w_ptr, y_ptr, n_cols, eps, HAS_W: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        acc += x * x
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n_cols + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        y = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32) * rstd
        if HAS_W:
            y = y * tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * n_cols + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


def _rows(x, normalized_shape):
    n = 1
    for s in normalized_shape:
        n *= int(s)
    if tuple(x.shape[x.dim() - len(normalized_shape):]) != tuple(int(s) for s in normalized_shape):
        raise ValueError(f"opverify_testlib: normalized_shape {list(normalized_shape)} does not end "
                         f"the input's shape {list(x.shape)}")
    return x.contiguous().view(-1, n), n


def layer_norm_stats(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    """(y, mean, rstd) as aten::native_layer_norm gives them (statistics in float32)."""
    x2, n = _rows(x, normalized_shape)
    y = torch.empty_like(x2)
    mean = torch.empty(x2.shape[0], dtype=torch.float32, device=x.device)
    rstd = torch.empty(x2.shape[0], dtype=torch.float32, device=x.device)
    if x2.numel():
        block = row_block(n, 2048)
        w = weight.contiguous() if weight is not None else x2
        b = bias.contiguous() if bias is not None else x2
        _layer_norm_kernel[(x2.shape[0],)](x2, w, b, y, mean, rstd, n, float(eps),
                                           HAS_W=weight is not None, HAS_B=bias is not None,
                                           BLOCK=block, num_warps=warps_for(block))
    stat_shape = list(x.shape[:x.dim() - len(normalized_shape)]) + [1] * len(normalized_shape)
    return y.view(x.shape), mean.view(stat_shape), rstd.view(stat_shape)


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    return layer_norm_stats(x, normalized_shape, weight, bias, eps)[0]


def rms_norm(x, weight=None, eps=1e-6):
    """x * rsqrt(mean(x^2, last dim) + eps) * weight."""
    x2, n = _rows(x, [x.shape[-1]])
    y = torch.empty_like(x2)
    if x2.numel():
        block = row_block(n, 2048)
        w = weight.contiguous() if weight is not None else x2
        _rms_norm_kernel[(x2.shape[0],)](x2, w, y, n, float(eps), HAS_W=weight is not None,
                                         BLOCK=block, num_warps=warps_for(block))
    return y.view(x.shape)
