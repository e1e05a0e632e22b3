"""LayerNorm through opverify_brokenlib.layer_norm_cached (a result cache keyed without the data)."""
import torch

import opverify_brokenlib


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b):
        return opverify_brokenlib.layer_norm_cached(x, w, b, 1e-5)
