"""PLANTED DEFECT (float16 accumulator): the running sum of squares is kept in float16 across the
column chunks; it overflows (and before that loses precision) on long rows."""
import torch
import triton
import triton.language as tl

EPS = 1e-6


@triton.jit
def _rmsnorm_fp16_acc_kernel(x_ptr, w_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, eps,
                             BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    x_row = x_ptr + row * x_row_stride
    y_row = y_ptr + row * y_row_stride
    acc = tl.zeros([1], dtype=tl.float16)  # BUG: float16 accumulator
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < n_cols, other=0.0).to(tl.float16)
        part = tl.sum(v * v, axis=0).to(tl.float16)
        acc = acc + part
    ms = acc.to(tl.float32) / n_cols
    rstd = 1.0 / tl.sqrt(ms + eps)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
        y = x * rstd * w
        tl.store(y_row + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.eps = EPS
        self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, hidden))

    def forward(self, x):
        n_cols = self.hidden
        x2 = x.contiguous().view(-1, n_cols)
        n_rows = x2.shape[0]
        y = torch.empty_like(x2)
        BLOCK = 256
        _rmsnorm_fp16_acc_kernel[(n_rows,)](x2, self.weight, y, n_cols, x2.stride(0), y.stride(0),
                                            self.eps, BLOCK=BLOCK, num_warps=4)
        return y.view(x.shape)
