"""Broadcasting add through the library: one strided kernel, broadcast dimensions as stride 0."""
import torch

import opverify_testlib


class ModelNew(torch.nn.Module):
    def forward(self, x, y):
        return opverify_testlib.add(x, y, alpha=0.5)
