"""fla's fused LayerNorm with a sigmoid output gate (fla.modules.fused_norm_gate), imported from the carried source."""
import torch
from fla.modules.fused_norm_gate import layer_norm_gated


class ModelNew(torch.nn.Module):
    def forward(self, x, g, w, b):
        return layer_norm_gated(x, g, w, b, activation='sigmoid', eps=1e-6)
