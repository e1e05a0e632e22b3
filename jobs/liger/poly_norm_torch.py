"""Liger-Kernel poly_norm_forward: w0 * norm(x^3) + w1 * norm(x^2) + w2 * norm(x) + b with
norm(u) = u * rsqrt(mean(u^2) + eps); the reference computes in float32 and rounds once.
Case parameters: rows, cols, dtype."""
import torch
import torch.nn.functional as F

CASES = [dict(rows=37, cols=1000, dtype="float16")]


def _norm(u):
    return u * torch.rsqrt(u.pow(2).mean(-1, keepdim=True) + 1e-6)


class Model(torch.nn.Module):
    def forward(self, x, w, b):
        xf, wf, bf = x.float(), w.float(), b.float()
        y = wf[0] * _norm(xf ** 3) + wf[1] * _norm(xf ** 2) + wf[2] * _norm(xf) + bf
        return y.to(x.dtype)


def get_init_inputs():
    return []


def get_inputs(rows=37, cols=1000, dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn(rows, cols).to(dt), torch.tensor([0.3, 0.5, 0.9]).to(dt), torch.tensor([0.1]).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
