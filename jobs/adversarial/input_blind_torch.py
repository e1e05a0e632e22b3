"""A reference that ignores its input: x * 0 plus a fixed ramp. Its output
is neither near zero nor one value, so the single-output checks pass it,
yet an implementation that returns the ramp without reading x matches.
Flagged (a warning, the case still passes) because the output does not
move when the input seed does."""
import torch

EXPECTED_WARNING = "does not depend on them"
CAUGHT_BY = "degenerate reference across seeds"
MISSED_WITH = {"seeds": 1}


class Model(torch.nn.Module):
    def forward(self, x):
        ramp = torch.arange(x.shape[-1], dtype=x.dtype) * 0.25 - 3.0
        return x * 0 + ramp


def get_init_inputs():
    return []


def get_inputs(rows=16, cols=256):
    return [torch.randn(rows, cols)]
