"""FlagGems `linalg_lu_factor_ex` (aten::linalg_lu_factor_ex), library-backed: the reference is the
ATen operator, the implementation (linalg_lu_factor_ex_triton_impl.py) calls
flag_gems.linalg_lu_factor_ex. Written by tools/flaggems_tasks.py; inputs from FlagGems' no FlagGems
test read: default shape. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.linalg_lu_factor_ex.default(x0, pivot=True, check_errors=False)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
