"""FlagGems `diagonal_copy` (aten::diagonal_copy), library-backed: the reference is the ATen operator,
the implementation (diagonal_copy_triton_impl.py) calls flag_gems.diagonal_copy. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_diagonal_copy.py: DIAGONAL_COPY_SHAPES,
utils.FLOAT_DTYPES. Case parameters: dtype."""
import torch

NON_COMPUTE = True

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.diagonal_copy.default(x0, 0, 0, 1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((2, 3, 4, 5)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
