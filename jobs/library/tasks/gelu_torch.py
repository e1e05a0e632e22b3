"""GELU, exact (erf) or tanh approximation. Case parameters: rows, cols, dtype, approximate."""
import torch

CASES = [dict(rows=33, cols=1000, dtype="float16", approximate="none")]


class Model(torch.nn.Module):
    def forward(self, x, approximate):
        return torch.nn.functional.gelu(x, approximate=approximate)


def get_init_inputs():
    return []


def get_inputs(rows=33, cols=1000, dtype="float16", approximate="none"):
    return [(torch.randn(rows, cols) * 3.0).to(getattr(torch, dtype)), approximate]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
