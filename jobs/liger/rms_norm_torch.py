"""Liger-Kernel rms_norm_forward (casting mode "llama", the HF LlamaRMSNorm): statistics in float32,
x * rstd rounded to the input dtype, then times the weight in that dtype. Case parameters: rows, cols, dtype."""
import torch
import torch.nn.functional as F

CASES = [dict(rows=37, cols=1000, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x, w):
        xf = x.float()
        normed = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-6)
        return w * normed.to(x.dtype)


def get_init_inputs():
    return []


def get_inputs(rows=37, cols=1000, dtype="float16"):
    dt = getattr(torch, dtype)
    return [(torch.randn(rows, cols) * 2.0).to(dt), (torch.rand(cols) + 0.5).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
