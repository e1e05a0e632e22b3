"""PLANTED DEFECT (hidden state): the gate parameter is created with torch.rand where the
reference uses torch.randn; the kernel itself is a correct x * sigmoid(w)."""
import torch
import triton
import triton.language as tl


@triton.jit
def _gate_kernel(x_ptr, w_ptr, y_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    w = tl.load(w_ptr + offs % n_cols, mask=mask, other=0.0).to(tl.float32)
    g = (1.0 / (1.0 + tl.exp(-w))).to(y_ptr.dtype.element_ty).to(tl.float32)
    tl.store(y_ptr + offs, (x * g).to(y_ptr.dtype.element_ty), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.weight = torch.nn.Parameter(torch.rand(hidden))  # BUG: the reference uses torch.randn

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        _gate_kernel[(triton.cdiv(n, BLOCK),)](x, self.weight, y, n, self.hidden, BLOCK=BLOCK, num_warps=4)
        return y
