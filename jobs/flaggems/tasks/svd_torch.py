"""FlagGems `svd` (aten::svd), library-backed: the reference is the ATen operator, the implementation
(svd_triton_impl.py) calls flag_gems.svd. Written by tools/flaggems_tasks.py; inputs from FlagGems'
tests/test_svd.py: utils.SVD_FAST_SHAPES, [torch.float16, torch.bfloat16]. Case parameters: dtype."""
import torch

CASES = [dict(dtype="float32")]


class Model(torch.nn.Module):
    def forward(self, x0):
        return torch.ops.aten.svd.default(x0, True, True)


def get_init_inputs():
    return []


def get_inputs(dtype="float32"):
    dt = getattr(torch, dtype)
    return [torch.randn((64, 32)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def canonical_outputs(outputs):
    """Singular vectors are unique only up to sign (each pair's), so what is judged is what holds
    for every choice of signs, as FlagGems' test judges an SVD: the reconstruction U diag(S) Vh,
    the singular values, U^H U and Vh Vh^H (docs/PRECISION.md)."""
    u, s, v = outputs
    vh = v.mH
    k = s.shape[-1]
    return [u[..., :k] @ torch.diag_embed(s).to(u.dtype) @ vh[..., :k, :], s, u.mH @ u, vh @ vh.mH]
