"""Defect of library form: exact GELU, the library's gelu_small_fallback hands tensors under
65 536 elements to torch.nn.functional.gelu. The static lint follows the implementation's call
into the declared library and finds torch compute there (type 3) on every case, the large ones
included: the code path exists. Case parameters: rows, cols, dtype."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3
CASES = [dict(rows=33, cols=1000, dtype="float16"), dict(rows=128, cols=1024, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.nn.functional.gelu(x)


def get_init_inputs():
    return []


def get_inputs(rows=33, cols=1000, dtype="float16"):
    return [(torch.randn(rows, cols) * 3.0).to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
