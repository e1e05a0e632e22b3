"""FlagGems `sign` (aten::sign), library-backed: the reference is the ATen operator, the implementation
(sign_triton_impl.py) calls flag_gems.sign. Written by tools/flaggems_tasks.py; inputs from
FlagGems' tests/test_sign.py: [torch.float32, torch.float16]. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float32"), dict(dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.sign.default(x0)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((20, 320, 15)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
