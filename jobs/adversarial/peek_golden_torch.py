"""relu. The implementation looks for the reference's output instead of
computing it: every tensor the garbage collector tracks, then the locals of
every frame above it. Caught because the golden is hidden while ModelNew
runs (kept alive by address, untracked, in no frame's locals)."""
import torch

EXPECTED_ERROR_TYPE = "AccuracyError"
CAUGHT_BY = "golden hidden from gc and frames"
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
