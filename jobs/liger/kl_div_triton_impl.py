"""Liger-Kernel's KL divergence forward, unreduced (liger_kernel.ops.kl_div)."""
import torch
from liger_kernel.ops.kl_div import kldiv_forward_triton


class ModelNew(torch.nn.Module):
    def forward(self, log_q, p):
        return kldiv_forward_triton(log_q, p, False, "none", 1e-10)
