"""relu. The implementation memorised the outputs for the inputs seed 0
gives (it replays the task's own RNG draws at import) and ignores its
input. One seed cannot see it; several input seeds per case can."""
import torch

EXPECTED_ERROR_TYPE = "AccuracyError"
CAUGHT_BY = "several input seeds per case"
MISSED_WITH = {"seeds": 1}
CASES = [dict(rows=8, cols=1000), dict(rows=3, cols=77)]


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_init_inputs():
    return []


def get_inputs(rows=8, cols=1000):
    return [torch.randn(rows, cols)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
