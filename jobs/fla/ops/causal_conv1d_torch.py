"""fla.modules.convolution.causal_conv1d (Triton backend), a depthwise causal convolution over
time with a window of 4, bias and silu: y[t] = silu(bias + sum_j w[:, j] * x[t - 3 + j]), in
float32, rounded to the input's dtype. Case parameters: batch, seq, dim, dtype."""
import torch
import torch.nn.functional as F

from fla_reference import wide

CASES = [dict(batch=2, seq=500, dim=1024, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x, w, b):
        xt = F.pad(wide(x).transpose(1, 2), (w.shape[1] - 1, 0))
        y = F.conv1d(xt, wide(w).unsqueeze(1), wide(b), groups=w.shape[0]).transpose(1, 2)
        return F.silu(y).to(x.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(batch=2, seq=500, dim=1024, dtype="bfloat16"):
    dt = getattr(torch, dtype)
    return [torch.randn(batch, seq, dim).to(dt), (torch.randn(dim, 4) * 0.5).to(dt), (torch.randn(dim) * 0.1).to(dt)]
