"""Liger-Kernel liger_dyt_fwd (Dynamic Tanh, autotuned): gamma * tanh(alpha * x) + beta.
Case parameters: rows, cols, dtype."""
import torch
import torch.nn.functional as F

CASES = [dict(rows=37, cols=1000, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x, alpha, gamma, beta):
        return gamma * torch.tanh(alpha * x) + beta


def get_init_inputs():
    return []


def get_inputs(rows=37, cols=1000, dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn(rows, cols).to(dt), torch.tensor([0.7]).to(dt), (torch.rand(cols) + 0.5).to(dt),
            torch.randn(cols).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
