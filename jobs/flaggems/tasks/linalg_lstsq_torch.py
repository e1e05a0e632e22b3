"""FlagGems `linalg_lstsq` (aten::linalg_lstsq), library-backed: the reference is the ATen operator,
the implementation (linalg_lstsq_triton_impl.py) calls flag_gems.linalg_lstsq. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_linalg_lstsq.py: _SHAPES, [torch.float32].
Case parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/linalg_lstsq.py:575-957 (torch.cat) and :1238 (torch.linalg.lstsq)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.linalg_lstsq.default(x0, x1, None, driver=None)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((256, 32)).to(dt),
            torch.randn((256, 32)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
