"""FlagGems `lift_fresh` (aten::lift_fresh), library-backed: the reference is the ATen operator, the
implementation (lift_fresh_triton_impl.py) calls flag_gems.lift_fresh. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_lift_fresh.py: LIFT_FRESH_SHAPES,
utils.FLOAT_DTYPES. Case parameters: dtype."""
import torch

NON_COMPUTE = True

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.lift_fresh.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((128, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
