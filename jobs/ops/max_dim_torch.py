"""Row maximum with its index: torch.max(x, dim=-1) -> (values, indices). Two outputs.

values keep the input dtype (judged as floats), indices are int64 (float input, so the judge's
quant route). PyTorch returns the first index among equal maxima.
Case parameters: rows, cols, dtype ("float16" | "bfloat16" | "float32").
"""
import torch

CASES = [
    dict(rows=1, cols=1, dtype="float32"),
    dict(rows=128, cols=1000, dtype="float32"),
    dict(rows=64, cols=1023, dtype="float16"),
    dict(rows=16, cols=4097, dtype="float32"),
    dict(rows=32, cols=4096, dtype="bfloat16"),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        result = torch.max(x, dim=-1)
        return result.values, result.indices


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float32"):
    x = torch.randn(rows, cols, dtype=torch.float32)
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
