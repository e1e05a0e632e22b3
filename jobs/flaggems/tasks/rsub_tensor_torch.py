"""FlagGems `rsub_tensor` (aten::rsub.Tensor), library-backed: the reference is the ATen operator, the
implementation (rsub_tensor_triton_impl.py) calls flag_gems.rsub_tensor. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_rsub.py: POINTWISE_SHAPES, FLOAT_DTYPES.
Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.rsub.Tensor(x0, x1, alpha=1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt),
            torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
