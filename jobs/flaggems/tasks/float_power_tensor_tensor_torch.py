"""FlagGems `float_power_tensor_tensor` (aten::float_power.Tensor_Tensor), library-backed: the
reference is the ATen operator, the implementation (float_power_tensor_tensor_triton_impl.py) calls
flag_gems.float_power_tensor_tensor. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_float_power.py: POINTWISE_SHAPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.float_power.Tensor_Tensor(x0, x1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [(torch.rand((4, 3, 5)) + 0.5).to(dt),
            (torch.rand((4, 3, 5)) + 0.5).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
