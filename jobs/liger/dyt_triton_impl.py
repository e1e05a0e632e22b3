"""Liger-Kernel's DyT forward (liger_kernel.ops: dyt through its autograd.Function, as liger_kernel.ops exports it)."""
import torch
from liger_kernel.ops import LigerDyTFunction


class ModelNew(torch.nn.Module):
    def forward(self, x, alpha, gamma, beta):
        return LigerDyTFunction.apply(x, alpha, gamma, beta)
