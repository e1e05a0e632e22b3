"""FlagGems `conj_physical` (aten::conj_physical), library-backed: the reference is the ATen operator,
the implementation (conj_physical_triton_impl.py) calls flag_gems.conj_physical. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_conj_physical.py: CONJ_SHAPES,
CONJ_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.conj_physical.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((32, 64)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
