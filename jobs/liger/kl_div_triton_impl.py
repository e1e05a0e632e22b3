"""Liger-Kernel's KL divergence forward, unreduced (liger_kernel.ops: kl_div through its autograd.Function, as liger_kernel.ops exports it)."""
import torch
from liger_kernel.ops import LigerKLDivLossFunction


class ModelNew(torch.nn.Module):
    def forward(self, log_q, p):
        return LigerKLDivLossFunction.apply(log_q, p, "none", False, 1e-10)
