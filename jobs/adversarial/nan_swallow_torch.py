"""relu. The implementation uses where(x > 0, x, 0), which turns NaN into 0
where relu keeps it. Random normal inputs never hold a NaN; the generated
edge case laced with NaN, +Inf and -Inf does."""
import torch

EXPECTED_ERROR_TYPE = "NaNMismatch"
CAUGHT_BY = "generated edge cases (NaN/Inf inputs)"
MISSED_WITH = {"edge_cases": False}


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_init_inputs():
    return []


def get_inputs(rows=16, cols=256):
    return [torch.randn(rows, cols)]
