"""PLANTED DEFECT (lint type 4): the only kernel is a placeholder copy (tl.load/tl.store only);
the arithmetic is done by PyTorch through Python operators before the launch."""
import torch
import triton
import triton.language as tl


@triton.jit
def _copy_kernel(src_ptr, dst_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        s = ((x + y) * 0.5).contiguous()  # CHEAT: the real compute, in PyTorch
        out = torch.empty_like(s)
        n = s.numel()
        BLOCK = 1024
        _copy_kernel[(triton.cdiv(n, BLOCK),)](s, out, n, BLOCK=BLOCK)
        return out
