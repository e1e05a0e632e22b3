"""FlagGems `special_digamma` (aten::special_digamma), library-backed: the reference is the ATen
operator, the implementation (special_digamma_triton_impl.py) calls flag_gems.special_digamma.
Written by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_special_digamma.py:
utils.POINTWISE_SHAPES, utils.FLOAT_DTYPES. Case parameters: dtype.

Fails on the device, attributed (library-defect, docs/LIBRARIES.md): flag_gems/ops/digamma_.py:152
(no pole branch in the reflection)."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.special_digamma.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
