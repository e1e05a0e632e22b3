"""Liger-Kernel's fused residual add + RMSNorm forward (liger_kernel.ops.fused_add_rms_norm)."""
import torch
from liger_kernel.ops import fused_add_rms_norm_forward


class ModelNew(torch.nn.Module):
    def forward(self, x, r, w):
        y, s = fused_add_rms_norm_forward(x, r, w, 1e-6, 0.0, "llama")[:2]
        return y, s
