"""Scale by 2. The implementation works in blocks of 64 elements and drops
the tail; every one of the operator's own cases is a multiple of 64, so it
passes them. The generated edge cases (`edge_cases: true`: sizes 2^k-1,
2^k+1, 1, ...) have tails."""
import torch

EXPECTED_ERROR_TYPE = "AccuracyError"
CAUGHT_BY = "generated edge cases"
MISSED_WITH = {"edge_cases": False}
CASES = [dict(n=1024), dict(n=4096)]


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2


def get_init_inputs():
    return []


def get_inputs(n=1024):
    return [torch.randn(n)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
