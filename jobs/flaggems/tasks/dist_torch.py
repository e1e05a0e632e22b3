"""FlagGems `dist` (aten::dist), library-backed: the reference is the ATen operator, the implementation
(dist_triton_impl.py) calls flag_gems.dist. Written by tools/flaggems_tasks.py; inputs from
FlagGems' tests/test_dist.py: [(1024,), (32, 1024), (4096,)], [torch.float16, torch.float32,
torch.bfloat16]. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x0, x1):
        return torch.ops.aten.dist.default(x0, x1, 2)


def get_init_inputs():
    return []


def get_inputs(dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn((64, 96)).to(dt),
            torch.randn((64, 96)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
