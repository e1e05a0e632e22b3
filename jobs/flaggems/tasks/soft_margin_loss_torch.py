"""FlagGems `soft_margin_loss` (aten::soft_margin_loss), library-backed: the reference is the ATen
operator, the implementation (soft_margin_loss_triton_impl.py) calls flag_gems.soft_margin_loss.
Written by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_soft_margin_loss.py:
SOFT_MARGIN_LOSS_SHAPES, utils.FLOAT_DTYPES. Case parameters: dtype.

Expected to fail the lint (type 3): FlagGems computes with torch on this path,
flag_gems/ops/soft_margin_loss.py:163 (tmp_sum / float(n_elements): the mean by torch division,
runtime type 3 on the device, and the lint's since it judges arithmetic on the tensors a launcher
makes)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.soft_margin_loss.default(x0, x1, 1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((128, 256)).to(dt),
            torch.randn((128, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
