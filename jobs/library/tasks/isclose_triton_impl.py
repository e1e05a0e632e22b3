"""isclose through the library, in ATen's arithmetic (each step rounded to the inputs' dtype)."""
import torch

import opverify_testlib


class ModelNew(torch.nn.Module):
    def forward(self, a, b):
        return opverify_testlib.isclose(a, b, rtol=0.05, atol=0.05)
