"""Liger-Kernel relu_squared_forward: relu(x) ** 2. Case parameters: rows, cols, dtype."""
import torch
import torch.nn.functional as F

CASES = [dict(rows=37, cols=1000, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x):
        return F.relu(x) ** 2


def get_init_inputs():
    return []


def get_inputs(rows=37, cols=1000, dtype="float16"):
    return [(torch.randn(rows, cols) * 3.0).to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
