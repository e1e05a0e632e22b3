"""FlagGems `heaviside` (aten::heaviside), library-backed: the reference is the ATen operator, the
implementation (heaviside_triton_impl.py) calls flag_gems.heaviside. Written by
tools/flaggems_tasks.py; inputs from FlagGems' tests/test_heaviside.py: [(2, 3), (128, 256), (512,
512)], utils.FLOAT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.heaviside.default(x0, x1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((128, 256)).to(dt),
            torch.randn((128, 256)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
