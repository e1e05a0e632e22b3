"""RMSNorm: one program per row, sum of squares accumulated in float32."""
import torch
import triton
import triton.language as tl

EPS = 1e-6


@triton.jit
def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, n_cols, x_row_stride, y_row_stride, eps,
                    BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    ms = tl.sum(x * x, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(ms + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * rstd * w
    tl.store(y_ptr + row * y_row_stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)


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
        BLOCK = triton.next_power_of_2(n_cols)
        BLOCK = BLOCK if BLOCK >= 16 else 16
        nw = 4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16)
        _rmsnorm_kernel[(n_rows,)](x2, self.weight, y, n_cols, x2.stride(0), y.stride(0), self.eps,
                                   BLOCK=BLOCK, num_warps=nw)
        return y.view(x.shape)
