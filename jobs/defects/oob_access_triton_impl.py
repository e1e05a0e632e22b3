"""PLANTED DEFECT (illegal memory access): the store address is shifted by a huge runtime offset
(2**42 elements) past the output buffer."""
import torch
import triton
import triton.language as tl

BAD_OFFSET = 1 << 42


@triton.jit
def _relu_oob_kernel(x_ptr, y_ptr, n_elements, bad_offset, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    y = tl.maximum(x, 0.0)
    tl.store(y_ptr + offs + bad_offset, y, mask=mask)  # BUG: far out of bounds


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        BLOCK = 1024
        _relu_oob_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BAD_OFFSET, BLOCK=BLOCK, num_warps=4)
        return y
