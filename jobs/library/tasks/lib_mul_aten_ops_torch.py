"""Cheat of library form: the library's mul launches a copy kernel of its own and multiplies
through torch.ops.aten.mul.Tensor, a spelling of torch compute a name-based lint may not know.
The static lint (type 3, once it reads torch.ops.aten.* as compute) or else the runtime dispatch
trace (aten::mul on the device, type 3) fails it. Case parameters: rows, cols, dtype."""
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
