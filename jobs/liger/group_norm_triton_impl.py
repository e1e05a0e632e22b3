"""Liger-Kernel's GroupNorm forward (liger_kernel.ops.group_norm)."""
import torch
from liger_kernel.ops import group_norm_forward


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b, groups):
        return group_norm_forward(x, x.shape[1], groups, w, b, 1e-5)[0]
