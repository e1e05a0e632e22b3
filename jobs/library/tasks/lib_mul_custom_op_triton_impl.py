"""a * b through opverify_brokenlib.mul_custom_op (a custom operator of the library's own, implemented with torch)."""
import torch

import opverify_brokenlib


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return opverify_brokenlib.mul_custom_op(a, b)
