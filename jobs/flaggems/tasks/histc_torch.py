"""FlagGems `histc` (aten::histc), library-backed: the reference is the ATen operator, the
implementation (histc_triton_impl.py) calls flag_gems.histc. Written by tools/flaggems_tasks.py;
inputs from FlagGems' tests/test_histc.py: HISTC_SHAPES, HISTC_DTYPES. Case parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/histc.py:149-157 (inp.min()/inp.max() and a torch count when min = max = 0, the
default: the range comes from the data)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.histc.default(x0, 100, 0, 0)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((4096,)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
