"""FlagGems `addbmm` (aten::addbmm), library-backed: the reference is the ATen operator, the
implementation (addbmm_triton_impl.py) calls flag_gems.addbmm. Written by tools/flaggems_tasks.py;
inputs from FlagGems' tests/test_addbmm.py: utils.FLOAT_DTYPES. Case parameters: dtype.

Fails on the device, attributed (reference-suspect, docs/LIBRARIES.md): float16 and bfloat16: the
CPU golden's half-precision rounding; A/B reference_suspect."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1, x2):
        return torch.ops.aten.addbmm.default(x0, x1, x2, beta=1, alpha=1)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((64, 48)).to(dt),
            torch.randn((4, 64, 96)).to(dt),
            torch.randn((4, 96, 48)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
