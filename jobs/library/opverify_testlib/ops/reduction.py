"""Row reductions over one dimension: softmax, sum, mean, prod and cumsum. One program
per row, the row walked in blocks, every accumulator in float32."""
import torch
import triton
import triton.language as tl

from .._launch import as_rows, from_rows, row_block, warps_for

SUM, MEAN, PROD = 0, 1, 2


@triton.jit
def _softmax_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    y_row = y_ptr + row * n_cols
    # Online max and rescaled sum per lane; -inf lanes (masked) contribute 0.
    m = tl.full([BLOCK], -float("inf"), tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(x_row + cols, mask=cols < n_cols, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, x)
        live = m_new > -float("inf")
        s = tl.where(live, s * tl.exp(m - m_new) + tl.exp(x - m_new), 0.0)
        m = m_new
    row_max = tl.max(m, axis=0)
    total = tl.sum(tl.where(m > -float("inf"), s * tl.exp(m - row_max), 0.0), axis=0)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=-float("inf")).to(tl.float32)
        tl.store(y_row + cols, (tl.exp(x - row_max) / total).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def _mul(a, b):
    return a * b


@triton.jit
def _row_reduce_kernel(x_ptr, y_ptr, n_cols, OP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * n_cols
    if OP == 2:
        acc = tl.full([BLOCK], 1.0, tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc = acc * tl.load(x_row + cols, mask=cols < n_cols, other=1.0).to(tl.float32)
        result = tl.reduce(acc, 0, _mul)
    else:
        acc = tl.zeros([BLOCK], dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            acc += tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
        result = tl.sum(acc, axis=0)
        if OP == 1:
            result = result / n_cols
    tl.store(y_ptr + row, result.to(y_ptr.dtype.element_ty))


@triton.jit
def _cumsum_kernel(x_ptr, y_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    carry = tl.zeros([1], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        v = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_ptr + row * n_cols + cols, (tl.cumsum(v, axis=0) + carry).to(y_ptr.dtype.element_ty), mask=mask)
        carry += tl.sum(v, axis=0)


def _check_float(x, what):
    if not x.is_floating_point():
        raise TypeError(f"opverify_testlib.{what}: floating inputs only, got {x.dtype}")


def softmax(x, dim=-1, out_dtype=None):
    _check_float(x, "softmax")
    x2, moved_shape, moved = as_rows(x, dim)
    y2 = torch.empty(x2.shape, dtype=out_dtype or x.dtype, device=x.device)
    if x2.numel():
        block = row_block(x2.shape[1])
        _softmax_kernel[(x2.shape[0],)](x2, y2, x2.shape[1], BLOCK=block, num_warps=warps_for(block))
    return from_rows(y2, moved_shape, dim, moved)


def _normalize_dims(x, dim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return list(range(x.dim()))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return sorted({d % max(x.dim(), 1) for d in dims})


def _reduce(x, dim, keepdim, dtype, op, what):
    _check_float(x, what)
    dims = _normalize_dims(x, dim)
    kept = [d for d in range(x.dim()) if d not in dims]
    moved = x.permute(kept + dims) if x.dim() else x
    n = 1
    for d in dims:
        n *= x.shape[d]
    x2 = moved.contiguous().view(-1, n) if x.dim() else x.contiguous().view(1, 1)
    out_shape = [1 if d in dims else x.shape[d] for d in range(x.dim())] if keepdim else [x.shape[d] for d in kept]
    y = torch.empty(x2.shape[0], dtype=dtype or x.dtype, device=x.device)
    if x2.shape[0]:
        if n == 0:
            y.fill_(1.0 if op == PROD else (float("nan") if op == MEAN else 0.0))
        else:
            block = row_block(n, 1024)
            _row_reduce_kernel[(x2.shape[0],)](x2, y, n, OP=op, BLOCK=block, num_warps=warps_for(block))
    return y.view(out_shape)


def sum_dim(x, dim=None, keepdim=False, dtype=None):
    return _reduce(x, dim, keepdim, dtype, SUM, "sum_dim")


def mean_dim(x, dim=None, keepdim=False, dtype=None):
    return _reduce(x, dim, keepdim, dtype, MEAN, "mean_dim")


def prod_dim(x, dim, keepdim=False, dtype=None):
    """The product along dim, accumulated in float32 whatever the storage dtype."""
    return _reduce(x, dim, keepdim, dtype, PROD, "prod_dim")


def cumsum(x, dim, dtype=None):
    _check_float(x, "cumsum")
    x2, moved_shape, moved = as_rows(x, dim)
    y2 = torch.empty(x2.shape, dtype=dtype or x.dtype, device=x.device)
    if x2.numel():
        block = row_block(x2.shape[1], 1024)
        _cumsum_kernel[(x2.shape[0],)](x2, y2, x2.shape[1], BLOCK=block, num_warps=4)
    return from_rows(y2, moved_shape, dim, moved)
