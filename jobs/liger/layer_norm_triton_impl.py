"""Liger-Kernel's LayerNorm forward (liger_kernel.ops.layer_norm)."""
import torch
from liger_kernel.ops import layer_norm_forward


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b):
        return layer_norm_forward(x, w, b, 1e-5)[0]
