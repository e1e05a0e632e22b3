"""FlagGems `acos` (aten::acos), library-backed: the reference is the ATen operator, the implementation
(acos_triton_impl.py) calls flag_gems.acos. Written by tools/flaggems_tasks.py; inputs from
FlagGems' tests/test_acos.py: utils.POINTWISE_SHAPES, utils.FLOAT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.acos.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [(torch.rand((20, 320, 15)) * 1.8 - 0.9).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
