"""fla.ops.utils.logsumexp.logsumexp_fwd: logsumexp over the last dimension. Its launcher reduces
the kernel's per-block partial results with torch (z.logsumexp(-1), ops/utils/logsumexp.py:81):
LintError type 3. Case parameters: rows, cols, dtype."""
import torch

from fla_reference import wide

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3
CASES = [dict(rows=1023, cols=1000, dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.logsumexp(wide(x), -1)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(rows=1023, cols=1000, dtype="float32"):
    return [(torch.randn(rows, cols) * 3.0).to(getattr(torch, dtype))]
