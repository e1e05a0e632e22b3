"""Mean along one dimension of a 3-D tensor, keepdim as given. Case parameters: rows, cols,
dtype, dim, keepdim."""
import torch

CASES = [dict(rows=33, cols=1000, dtype="float16", dim=2, keepdim=False)]


class Model(torch.nn.Module):
    def forward(self, x, dim, keepdim):
        return torch.mean(x, dim=dim, keepdim=keepdim)


def get_init_inputs():
    return []


def get_inputs(rows=33, cols=1000, dtype="float16", dim=2, keepdim=False):
    return [(torch.randn(3, rows, cols) + 0.5).to(getattr(torch, dtype)), dim, keepdim]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
