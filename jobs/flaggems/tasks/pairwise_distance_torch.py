"""FlagGems `pairwise_distance` (aten::pairwise_distance), library-backed: the reference is the ATen
operator, the implementation (pairwise_distance_triton_impl.py) calls flag_gems.pairwise_distance.
Written by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_pairwise_distance.py: SHAPES,
FLOAT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.pairwise_distance.default(x0, x1, 2.0, 1e-06, False)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((64, 64)).to(dt),
            torch.randn((64, 64)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
