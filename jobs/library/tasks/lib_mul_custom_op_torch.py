"""Cheat of library form: the library's mul launches a copy kernel of its own and multiplies
through torch.ops.opverify_brokenlib.mul, a custom operator the library registers in its own
namespace and implements with torch (opverify_brokenlib/custom_ops.py). The static lint follows
torch.ops.<namespace>.<op> to what the library registered (type 3; it passed before), and the
runtime dispatch trace sees aten::mul on the device (type 3). Case parameters: rows, cols, dtype."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_REGRESSION_TYPE = 3


class Model(torch.nn.Module):
    def forward(self, a, b):
        return a * b


def get_init_inputs():
    return []


def get_inputs(rows=33, cols=1000, dtype="float16"):
    return [torch.randn(rows, cols).to(getattr(torch, dtype)), torch.randn(rows, cols).to(getattr(torch, dtype))]
