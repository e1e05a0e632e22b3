"""Liger-Kernel's JSD forward (liger_kernel.ops.jsd): input log Q, target log P."""
import torch
from liger_kernel.ops import jsd_forward


class ModelNew(torch.nn.Module):
    def forward(self, log_q, log_p):
        return jsd_forward(log_q, log_p, None, 0.5, -100, False)[0]
