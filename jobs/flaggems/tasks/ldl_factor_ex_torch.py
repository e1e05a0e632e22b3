"""FlagGems `ldl_factor_ex` (aten::linalg_ldl_factor_ex), library-backed: the reference is the ATen
operator, the implementation (ldl_factor_ex_triton_impl.py) calls flag_gems.ldl_factor_ex. Written
by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_linalg_ldl_factor_ex.py: LDLD_SHAPES,
LDLD_DTYPES. Case parameters: dtype.

Expected to fail the lint (type 2): FlagGems computes with torch on this path, launching no kernel
of its own, flag_gems/ops/ldl_factor_ex.py:91 (torch.ops.aten.linalg_ldl_factor_ex.out: ATen's own
factorisation, no kernel of the library)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 2

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.linalg_ldl_factor_ex.default(x0, hermitian=False, check_errors=False)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((32, 32)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
