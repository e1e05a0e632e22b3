"""Liger-Kernel _sparsemax_forward over the last dimension against a sort-based torch sparsemax.
Its launcher sorts every row with torch.sort before the kernel: LintError type 3.
Case parameters: rows, cols, dtype."""
import torch
import torch.nn.functional as F

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3
CASES = [dict(rows=37, cols=1000, dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x):
        z = x.float()
        zs, _ = torch.sort(z, dim=-1, descending=True)
        k = torch.arange(1, z.shape[-1] + 1, dtype=z.dtype)
        cums = zs.cumsum(-1)
        support = (1 + k * zs) > cums
        k_z = support.sum(-1, keepdim=True)
        tau = (cums.gather(-1, k_z - 1) - 1) / k_z.to(z.dtype)
        return torch.clamp(z - tau, min=0).to(x.dtype)


def get_init_inputs():
    return []


def get_inputs(rows=37, cols=1000, dtype="float32"):
    return [(torch.randn(rows, cols) * 2.0).to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
