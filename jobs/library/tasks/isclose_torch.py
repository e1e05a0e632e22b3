"""torch.isclose(a, b, rtol=0.05, atol=0.05) on pairs where about half are close: b = a plus
noise of varying size, a few NaN and infinities. Bool output, judged bitwise. Case parameters:
rows, cols, dtype."""
import torch

CASES = [dict(rows=33, cols=1000, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, a, b):
        return torch.isclose(a, b, rtol=0.05, atol=0.05)


def get_init_inputs():
    return []


def get_inputs(rows=33, cols=1000, dtype="float16"):
    a = torch.randn(rows, cols) * 4.0
    b = a + torch.randn(rows, cols) * 0.1 * (1.0 + a.abs())
    special = torch.rand(rows, cols)
    a[special < 0.01] = float("nan")
    a[(special >= 0.01) & (special < 0.02)] = float("inf")
    b[(special >= 0.015) & (special < 0.03)] = float("inf")
    dt = getattr(torch, dtype)
    return [a.to(dt), b.to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
