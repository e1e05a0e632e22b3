"""FlagGems `ldl_factor` (aten::linalg_ldl_factor), library-backed: the reference is the ATen operator,
the implementation (ldl_factor_triton_impl.py) calls flag_gems.ldl_factor. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_linalg_ldl_factor.py: [(4, 4), (8, 8),
(16, 16), (32, 32)], [torch.float32, torch.float64]. Case parameters: dtype.

Fails on the device, attributed (torch-in-library, docs/LIBRARIES.md):
flag_gems/ops/linalg_ldl_factor.py:200 ((A + A.mT) / 2 in torch, runtime type 3)."""
import torch

CASES = [dict(dtype="float32"), dict(dtype="float64")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.linalg_ldl_factor.default(x0, hermitian=False)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((32, 32)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
