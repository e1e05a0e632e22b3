"""FlagGems `linalg_slogdet` (aten::linalg_slogdet), library-backed: the reference is the ATen
operator, the implementation (linalg_slogdet_triton_impl.py) calls flag_gems.linalg_slogdet. Written
by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_linalg_slogdet.py: SLOGDET_SHAPES,
[torch.float32]. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.linalg_slogdet.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((32, 32)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
