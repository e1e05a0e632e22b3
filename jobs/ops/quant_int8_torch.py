"""Symmetric float -> int8 quantisation: clamp(round(x / scale), -128, 127) as int8.

scale is a one-element float32 input tensor (a get_inputs parameter). With scale 0.02 about 1%
of the elements saturate. The output is integer from float input, so the judge's quant route
applies (|diff| <= 1).
Case parameters: rows, cols, dtype ("float16" | "bfloat16" | "float32"), scale.
"""
import torch

CASES = [
    dict(rows=1, cols=1, dtype="float32"),
    dict(rows=128, cols=1000, dtype="float16"),
    dict(rows=7, cols=1023, dtype="float16"),
    dict(rows=3, cols=4097, dtype="bfloat16"),
    dict(rows=64, cols=4096, dtype="float32"),
    dict(rows=128, cols=1000, dtype="float32", scale=0.005),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, scale):
        q = torch.round(x.float() / scale)
        return torch.clamp(q, -128, 127).to(torch.int8)


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float16", scale=0.02):
    x = torch.randn(rows, cols, dtype=torch.float32)
    s = torch.full((1,), scale, dtype=torch.float32)
    return [x.to(getattr(torch, dtype)), s]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
