"""FlagGems `nanmedian` (aten::nanmedian), library-backed: the reference is the ATen operator, the
implementation (nanmedian_triton_impl.py) calls flag_gems.nanmedian. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_nanmedian.py: [(), (1,), (17,), (4, 33),
(2, 3, 129)], [torch.int8, torch.uint8, torch.int16, torch.int32]. Case parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/nanmedian.py:895-958 (the kthvalue fallback: torch.where, isnan, kthvalue, sort) and
:1260 (torch.sort)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="int8"), dict(dtype="uint8"), dict(dtype="int16"), dict(dtype="int32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.nanmedian.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="int8"):
    dt = getattr(torch, dtype)
    return [torch.randn((2, 3, 129)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
