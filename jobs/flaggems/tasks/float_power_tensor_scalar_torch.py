"""FlagGems `float_power_tensor_scalar` (aten::float_power.Tensor_Scalar), library-backed: the
reference is the ATen operator, the implementation (float_power_tensor_scalar_triton_impl.py) calls
flag_gems.float_power_tensor_scalar. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_float_power.py: POINTWISE_SHAPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.float_power.Tensor_Scalar(x0, 0.5)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [(torch.rand((4, 3, 5)) + 0.5).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
