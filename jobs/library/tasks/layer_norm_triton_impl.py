"""LayerNorm through the library (opverify_testlib.ops.norm)."""
import torch

import opverify_testlib


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b):
        return opverify_testlib.layer_norm(x, [x.shape[-1]], w, b, 1e-5)
