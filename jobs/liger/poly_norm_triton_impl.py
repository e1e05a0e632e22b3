"""Liger-Kernel's PolyNorm forward (liger_kernel.ops.poly_norm)."""
import torch
from liger_kernel.ops import poly_norm_forward


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b):
        return poly_norm_forward(x.contiguous(), w, b, 1e-6)[0]
