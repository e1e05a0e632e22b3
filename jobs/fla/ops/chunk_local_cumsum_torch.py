"""fla.ops.utils.cumsum.chunk_local_cumsum: the cumulative sum over time within each chunk of 64
steps, of scalar gates [B, T, H] (k=0) or per-key gates [B, T, H, K]; float32 out.
Case parameters: batch, seq, heads, k."""
import torch
import torch.nn.functional as F

from fla_reference import wide

CASES = [dict(batch=2, seq=512, heads=4, k=0)]


class Model(torch.nn.Module):
    def forward(self, g):
        B, T = g.shape[:2]
        chunks = wide(g).reshape(B, T // 64, 64, *g.shape[2:])
        return chunks.cumsum(2).reshape(g.shape)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=512, heads=4, k=0):
    shape = (batch, seq, heads) if k == 0 else (batch, seq, heads, k)
    return [F.logsigmoid(torch.randn(*shape))]
