"""relu. The implementation defines a kernel of its own and launches it from
forward, but only behind a condition that never holds at run time; the work
is done by a kernel imported from another module. The static lint sees a
kernel defined and launched. Caught by the profile of forward: none of the
file's own kernels ran (runtime type 2)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_REGRESSION_TYPE = 2
CAUGHT_BY = "profiler: the file's own Triton kernels must run"
CASES = [dict(n=1 << 20), dict(n=1000)]


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_init_inputs():
    return []


def get_inputs(n=1 << 20):
    return [torch.randn(n)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
