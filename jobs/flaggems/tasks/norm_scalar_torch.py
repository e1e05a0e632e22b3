"""FlagGems `norm_scalar` (aten::norm.Scalar), library-backed: the reference is the ATen operator, the
implementation (norm_scalar_triton_impl.py) calls flag_gems.norm_scalar. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_norm.py: REDUCTION_SHAPES, FLOAT_DTYPES.
Case parameters: dtype.

Fails on the device, attributed (library-defect, docs/LIBRARIES.md): flag_gems/ops/norm.py:324
(out.squeeze(dim=None), torch's named-dimension overload, raises for every input)."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.norm.Scalar(x0, 2)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((4096, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
