"""FlagGems `smooth_l1_loss` (aten::smooth_l1_loss), library-backed: the reference is the ATen
operator, the implementation (smooth_l1_loss_triton_impl.py) calls flag_gems.smooth_l1_loss. Written
by tools/flaggems_tasks.py; inputs from FlagGems' tests/test_smooth_l1_loss.py: [(0,), (1,), (2, 3),
(32, 17), (4, 8, 16), (2, 3, 16, 16)], utils.FLOAT_DTYPES. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.smooth_l1_loss.default(x0, x1, 1, 1.0)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((2, 3, 16, 16)).to(dt),
            torch.randn((2, 3, 16, 16)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
