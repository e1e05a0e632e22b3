"""FlagGems `linalg_vecdot` (aten::linalg_vecdot), library-backed: the reference is the ATen operator,
the implementation (linalg_vecdot_triton_impl.py) calls flag_gems.linalg_vecdot. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_linalg_vecdot.py: FLOAT_DTYPES. Case
parameters: dtype."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.linalg_vecdot.default(x0, x1, dim=-1)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt),
            torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
