"""Liger-Kernel _softmax_forward (single-block and multi-block kernels) against torch.softmax over the
last dimension. Case parameters: rows, cols, dtype."""
import torch
import torch.nn.functional as F

CASES = [dict(rows=37, cols=1000, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_init_inputs():
    return []


def get_inputs(rows=37, cols=1000, dtype="float16"):
    return [(torch.randn(rows, cols) * 2.0).to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
