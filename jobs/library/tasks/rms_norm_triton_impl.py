"""RMSNorm through the library (opverify_testlib.ops.norm)."""
import torch

import opverify_testlib


class ModelNew(torch.nn.Module):
    def forward(self, x, w):
        return opverify_testlib.rms_norm(x, w, 1e-6)
