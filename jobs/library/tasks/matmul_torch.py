"""Matrix product a @ b. Case parameters: M, N, K, dtype."""
import torch

CASES = [dict(M=128, N=96, K=200, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_init_inputs():
    return []


def get_inputs(M=128, N=96, K=200, dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn(M, K).to(dt), torch.randn(K, N).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
