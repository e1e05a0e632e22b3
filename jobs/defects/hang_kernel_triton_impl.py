"""PLANTED DEFECT (hang): a data-dependent loop with a runtime trip count of 2**62 iterations,
which the compiler cannot remove and the GPU never finishes."""
import torch
import triton
import triton.language as tl

N_ITER = 1 << 62


@triton.jit
def _relu_spin_kernel(x_ptr, y_ptr, n_elements, n_iter, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    acc = x
    for _i in range(0, n_iter):  # BUG: effectively endless
        acc = tl.maximum(acc * 0.5 + x * 0.5, 0.0)
    tl.store(y_ptr + offs, acc.to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        _relu_spin_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, N_ITER, BLOCK=BLOCK, num_warps=4)
        return y
