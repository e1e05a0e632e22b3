"""Liger-Kernel's RMSNorm forward (liger_kernel.ops.rms_norm), imported from the carried source."""
import torch
from liger_kernel.ops import rms_norm_forward


class ModelNew(torch.nn.Module):
    def forward(self, x, w):
        return rms_norm_forward(x, w, 1e-6, 0.0, "llama", None)[0]
