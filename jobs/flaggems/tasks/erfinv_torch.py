"""FlagGems `erfinv` (aten::erfinv), library-backed: the reference is the ATen operator, the
implementation (erfinv_triton_impl.py) calls flag_gems.erfinv. Written by tools/flaggems_tasks.py;
inputs from FlagGems' no FlagGems test read: default shape. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.erfinv.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [(torch.rand((20, 320, 15)) * 1.8 - 0.9).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
