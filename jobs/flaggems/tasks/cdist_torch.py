"""FlagGems `cdist` (aten::cdist), library-backed: the reference is the ATen operator, the
implementation (cdist_triton_impl.py) calls flag_gems.cdist. Written by tools/flaggems_tasks.py;
inputs from FlagGems' tests/test_cdist.py: [torch.float32]. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.cdist.default(x0, x1, 2.0, None)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((8, 64, 16)).to(dt),
            torch.randn((8, 48, 16)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
