"""Defect fixture: row-wise exp, whose Triton kernel does not compile
(tl.dot of two 1-D blocks: Triton requires 2-D operands). Every case must
fail with CompilationError, raised when the kernel is first launched.
Case parameters: rows, cols.
"""
import torch

EXPECTED_ERROR_TYPE = "CompilationError"

CASES = [dict(rows=4, cols=1000), dict(rows=16, cols=4096)]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.exp(x)


def get_init_inputs():
    return []


def get_inputs(rows=4, cols=1000):
    return [torch.randn(rows, cols, dtype=torch.float32)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
