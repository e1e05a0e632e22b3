import torch

BLOCK = 64


class ModelNew(torch.nn.Module):
    def forward(self, x):
        out = torch.zeros_like(x)
        full = x.numel() // BLOCK * BLOCK
        out[:full] = x[:full] * 2
        return out
