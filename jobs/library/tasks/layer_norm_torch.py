"""LayerNorm over the last dimension with weight and bias given as inputs (so the normalised
size can be swept): F.layer_norm(x, [cols], w, b, 1e-5). Case parameters: rows, cols, dtype."""
import torch

CASES = [dict(rows=33, cols=1000, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x, w, b):
        return torch.nn.functional.layer_norm(x, [x.shape[-1]], w, b, 1e-5)


def get_init_inputs():
    return []


def get_inputs(rows=33, cols=1000, dtype="float16"):
    dt = getattr(torch, dtype)
    return [(torch.randn(rows, cols) * 3.0 + 1.0).to(dt), (torch.rand(cols) + 0.5).to(dt), torch.randn(cols).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
