"""Liger-Kernel layer_norm_forward against F.layer_norm. Case parameters: rows, cols, dtype."""
import torch
import torch.nn.functional as F

CASES = [dict(rows=37, cols=1000, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x, w, b):
        return F.layer_norm(x, [x.shape[-1]], w, b, 1e-5)


def get_init_inputs():
    return []


def get_inputs(rows=37, cols=1000, dtype="float16"):
    dt = getattr(torch, dtype)
    return [(torch.randn(rows, cols) * 2.0 + 0.5).to(dt), (torch.rand(cols) + 0.5).to(dt), torch.randn(cols).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
