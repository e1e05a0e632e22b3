"""FlagGems `svd` (aten::svd), library-backed: the reference is the ATen operator, the implementation
(svd_triton_impl.py) calls flag_gems.svd. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_svd.py: utils.SVD_FAST_SHAPES, [torch.float16, torch.bfloat16]. Case parameters: dtype.
`compute_uv=False` against the schema's default: no singular vectors, which are unique only up to
sign (U and V are then zero-filled, as torch.svd documents, and compared as such).

Fails on the device, attributed (library-defect, docs/LIBRARIES.md): flag_gems/ops/svd.py:3424-3427
(compute_uv=False returns torch.empty U and V, where torch documents zeros)."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.svd.default(x0, True, False)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((64, 32)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
