"""Row sum: one program per row, a float32 vector accumulator over column chunks."""
import torch
import triton
import triton.language as tl


@triton.jit
def _row_sum_kernel(x_ptr, y_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    base = x_ptr + row * x_row_stride
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(base + cols, mask=cols < n_cols, other=0.0)
        acc += v.to(tl.float32)
    total = tl.sum(acc, axis=0)
    tl.store(y_ptr + row, total.to(y_ptr.dtype.element_ty))


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        n_rows = x2.shape[0]
        y = torch.empty((n_rows,), dtype=x.dtype, device=x.device)
        BLOCK = 1024 if n_cols > 1024 else triton.next_power_of_2(n_cols)
        BLOCK = BLOCK if BLOCK >= 16 else 16
        _row_sum_kernel[(n_rows,)](x2, y, n_cols, x2.stride(0), BLOCK=BLOCK, num_warps=4)
        return y.view(x.shape[:-1])
