"""Liger-Kernel's cross-entropy forward (liger_kernel.ops.cross_entropy), unreduced."""
import torch
from liger_kernel.ops import cross_entropy_forward


class ModelNew(torch.nn.Module):
    def forward(self, logits, target):
        return cross_entropy_forward(logits, target, None, -100, 0.0, 0.0, "none", None, False)[0]
