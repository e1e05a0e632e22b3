"""fla.ops.utils.cumsum.chunk_global_cumsum: the cumulative sum over the whole time axis, of scalar
gates [B, T, H] (k=0) or per-key gates [B, T, H, K]; float32 out. Case parameters: batch, seq,
heads, k."""
import torch
import torch.nn.functional as F

from fla_reference import wide

CASES = [dict(batch=2, seq=500, heads=4, k=0)]


class Model(torch.nn.Module):
    def forward(self, g):
        return wide(g).cumsum(1)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=500, heads=4, k=0):
    shape = (batch, seq, heads) if k == 0 else (batch, seq, heads, k)
    return [F.logsigmoid(torch.randn(*shape))]
