"""Mean along a dimension through the library (float32 accumulation)."""
import torch

import opverify_testlib


class ModelNew(torch.nn.Module):
    def forward(self, x, dim, keepdim):
        return opverify_testlib.mean_dim(x, dim, keepdim)
