"""int8 quantisation: IEEE division, round half to even (libdevice rint), clamp, convert."""
import torch
import triton
import triton.language as tl

try:
    from triton.language.extra import libdevice
except ImportError:  # older layouts
    from triton.language.extra.cuda import libdevice


@triton.jit
def _quant_int8_kernel(x_ptr, scale_ptr, out_ptr, n_elements, BLOCK: tl.constexpr):
    pid = tl.program_id(0).to(tl.int64)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    s = tl.zeros([BLOCK], dtype=tl.float32) + tl.load(scale_ptr).to(tl.float32)
    q = libdevice.rint(tl.div_rn(x, s))
    q = tl.minimum(tl.maximum(q, -128.0), 127.0)
    tl.store(out_ptr + offs, q.to(tl.int8), mask=mask)


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, scale):
        x = x.contiguous()
        out = torch.empty(x.shape, dtype=torch.int8, device=x.device)
        n = x.numel()
        BLOCK = 1024
        grid = (triton.cdiv(n, BLOCK),)
        _quant_int8_kernel[grid](x, scale, out, n, BLOCK=BLOCK, num_warps=4)
        return out
