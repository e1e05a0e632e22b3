"""FlagGems `margin_ranking_loss` (aten::margin_ranking_loss), library-backed: the reference is the
ATen operator, the implementation (margin_ranking_loss_triton_impl.py) calls
flag_gems.margin_ranking_loss. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_margin_ranking_loss.py: MARGIN_RANKING_SHAPES, utils.FLOAT_DTYPES. Case parameters:
dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/margin_ranking_loss.py:203-227 (out.sum()/out.mean() reductions) and :172
(torch.ops.aten.margin_ranking_loss for tensors off the device)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1, x2):
        return torch.ops.aten.margin_ranking_loss.default(x0, x1, x2, 0.0, 1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((128, 256)).to(dt),
            torch.randn((128, 256)).to(dt),
            torch.randn((128, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
