"""FlagGems `linalg_svdvals` (aten::linalg_svdvals), library-backed: the reference is the ATen
operator, the implementation (linalg_svdvals_triton_impl.py) calls flag_gems.linalg_svdvals. Written
by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_linalg_svdvals.py: [torch.float32].
Case parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/linalg_svdvals.py:55-56 (ATen's linalg_svdvals through getattr(torch.ops, 'aten') when
its SVD raises NotImplementedError)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.linalg_svdvals.default(x0, driver=None)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
