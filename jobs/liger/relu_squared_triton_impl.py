"""Liger-Kernel's ReLU-squared forward (liger_kernel.ops.relu_squared)."""
import torch
from liger_kernel.ops import relu_squared_forward


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return relu_squared_forward(x.contiguous())
