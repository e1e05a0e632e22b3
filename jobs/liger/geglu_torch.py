"""Liger-Kernel geglu_forward: gelu(a, tanh approximation) * b. Case parameters: rows, cols, dtype."""
import torch
import torch.nn.functional as F

CASES = [dict(rows=37, cols=1000, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, a, b):
        return F.gelu(a, approximate="tanh") * b


def get_init_inputs():
    return []


def get_inputs(rows=37, cols=1000, dtype="float16"):
    dt = getattr(torch, dtype)
    return [(torch.randn(rows, cols) * 3.0).to(dt), torch.randn(rows, cols).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
