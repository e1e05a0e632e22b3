"""FlagGems `vector_norm` (aten::linalg_vector_norm), library-backed: the reference is the ATen
operator, the implementation (vector_norm_triton_impl.py) calls flag_gems.vector_norm. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_vector_norm.py: utils.REDUCTION_SHAPES,
FLOAT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.linalg_vector_norm.default(x0, 2, None, False, dtype=None)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((4096, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
