"""PLANTED DEFECT (lint types 3 + 4), the seed's example: computation moved out of forward()
into a helper that uses torch.matmul and the tensor method .softmax, plus a placeholder kernel
that only copies the result."""
import torch
import triton
import triton.language as tl


@triton.jit
def identity_kernel(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    """Placeholder: copies the input to the output so that a Triton launch is seen."""
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


def _run_flash_attention(x, wq):
    query = torch.matmul(x, wq.t())     # main chain in torch
    weights = query.softmax(dim=-1)     # tensor method dodges a torch.softmax / F.softmax list
    return weights.contiguous()


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, wq):
        y = _run_flash_attention(x, wq)
        out = torch.empty_like(y)
        n = y.numel()
        identity_kernel[(triton.cdiv(n, 1024),)](y, out, n, BLOCK=1024)
        return out
