"""FlagGems `tril` (aten::tril), library-backed: the reference is the ATen operator, the implementation
(tril_triton_impl.py) calls flag_gems.tril. Written by tools/flaggems_tasks.py; inputs from
FlagGems' tests/test_tril.py: [(0, 0), (0, 7), (5, 0), (2, 0, 7), (2, 5, 0)], TRIL_OUT_EDGE_DTYPES.
Case parameters: dtype."""
import torch

NON_COMPUTE = True

CASES = [dict(dtype="float32"), dict(dtype="int64"), dict(dtype="bool")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.tril.default(x0, 0)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((0, 0)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
