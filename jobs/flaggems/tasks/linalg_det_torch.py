"""FlagGems `linalg_det` (aten::linalg_det), library-backed: the reference is the ATen operator, the
implementation (linalg_det_triton_impl.py) calls flag_gems.linalg_det. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_linalg_det.py: [(4, 4), (16, 16), (2, 32,
32)]. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.linalg_det.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((2, 32, 32)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
