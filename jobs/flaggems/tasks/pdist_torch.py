"""FlagGems `pdist` (aten::pdist), library-backed: the reference is the ATen operator, the
implementation (pdist_triton_impl.py) calls flag_gems.pdist. Written by tools/flaggems_tasks.py;
inputs from FlagGems' tests/test_pdist.py: PDIST_SHAPES, [torch.float32]. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.pdist.default(x0, 2.0)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((64, 128)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
