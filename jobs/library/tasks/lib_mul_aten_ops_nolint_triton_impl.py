"""a * b through opverify_brokenlib.mul_aten_ops (torch.ops.aten inside the library)."""
import torch

import opverify_brokenlib


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return opverify_brokenlib.mul_aten_ops(a, b)
