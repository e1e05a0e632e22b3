"""PLANTED DEFECT (lint type 3): the kernel does part of the work (exp(x - rowmax), in float32);
forward() finishes it with PyTorch tensor methods (.sum) and an operator division."""
import torch
import triton
import triton.language as tl


@triton.jit
def _exp_shifted_kernel(x_ptr, e_ptr, n_cols, x_row_stride, e_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(e_ptr + row * e_row_stride + cols, e, mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        n_cols = x.shape[-1]
        x2 = x.contiguous().view(-1, n_cols)
        n_rows = x2.shape[0]
        e = torch.empty((n_rows, n_cols), dtype=torch.float32, device=x.device)
        BLOCK = triton.next_power_of_2(n_cols)
        BLOCK = BLOCK if BLOCK >= 16 else 16
        nw = 4 if BLOCK <= 1024 else (8 if BLOCK <= 4096 else 16)
        _exp_shifted_kernel[(n_rows,)](x2, e, n_cols, x2.stride(0), e.stride(0), BLOCK=BLOCK, num_warps=nw)
        y = e / e.sum(dim=-1, keepdim=True)  # CHEAT: torch compute through a tensor method
        return y.to(x.dtype).view(x.shape)
