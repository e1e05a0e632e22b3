"""Defect fixture (f, device fault): relu(x), float32.

The implementation's kernel stores at an offset shifted by 2**42 elements (16 TiB past the
output), an unmapped address: the CUDA context reports an illegal memory access (Triton and
PyTorch may word it differently) and is unusable afterwards. Expected: every case fails with a
device error, recorded as that case's failure; the executor is restarted between cases.
Case parameters: rows, cols.
"""
import torch

EXPECTED_ERROR_TYPE = "DeviceError"

CASES = [
    dict(rows=128, cols=1000),
    dict(rows=7, cols=1023),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float32"):
    x = torch.randn(rows, cols, dtype=torch.float32)
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
