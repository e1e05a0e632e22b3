"""PLANTED DEFECT (lint type 3 via a helper): forward() looks clean, but the module-level helper
it calls does the matrix product with torch.matmul; only the relu is a Triton kernel."""
import torch
import triton
import triton.language as tl


@triton.jit
def _relu_kernel(x_ptr, y_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.where(x < 0.0, 0.0, x)
    tl.store(y_ptr + offs, y.to(y_ptr.dtype.element_ty), mask=mask)


def _project(a, b):
    return torch.matmul(a, b)  # CHEAT: torch compute outside forward()


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        h = _project(a, b).contiguous()
        out = torch.empty_like(h)
        n = h.numel()
        BLOCK = 1024
        _relu_kernel[(triton.cdiv(n, BLOCK),)](h, out, n, BLOCK=BLOCK, num_warps=4)
        return out
