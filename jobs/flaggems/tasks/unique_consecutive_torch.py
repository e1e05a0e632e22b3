"""FlagGems `unique_consecutive` (aten::unique_consecutive), library-backed: the reference is the ATen
operator, the implementation (unique_consecutive_triton_impl.py) calls flag_gems.unique_consecutive.
Written by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_unique_consecutive.py:
utils.SPECIAL_SHAPES, utils.INT_DTYPES. Case parameters: dtype. `return_inverse=True` against the
schema's default: every output a defined tensor to compare. `return_counts=True` against the
schema's default: every output a defined tensor to compare."""
import torch

CASES = [dict(dtype="int16"), dict(dtype="int32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.unique_consecutive.default(x0, True, True, None)


def get_init_inputs():
    return []


def get_inputs(dtype="int16"):
    dt = getattr(torch, dtype)
    return [torch.randint(-100, 100, (20, 320, 15), dtype=dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
