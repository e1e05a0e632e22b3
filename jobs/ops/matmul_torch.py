"""Matrix product C = A @ B, float16 (or bfloat16) in and out, float32 accumulation expected.

B is scaled by 1/sqrt(K) so that C is O(1) whatever K. M, N, K include sizes that are not
multiples of the kernel's blocks (64 x 64 x 32).
Case parameters: M, N, K, dtype ("float16" | "bfloat16").
"""
import math

import torch

CASES = [
    dict(M=1, N=1, K=1),
    dict(M=128, N=128, K=128),
    dict(M=1000, N=1023, K=257),
    dict(M=77, N=4097, K=64),
    dict(M=512, N=512, K=1024),
    dict(M=33, N=65, K=4097),
    dict(M=100, N=200, K=300, dtype="bfloat16"),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_init_inputs():
    return []


def get_inputs(M=128, N=128, K=128, dtype="float16"):
    a = torch.randn(M, K, dtype=torch.float32)
    b = torch.randn(K, N, dtype=torch.float32) / math.sqrt(K)
    dt = getattr(torch, dtype)
    return [a.to(dt), b.to(dt)]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
