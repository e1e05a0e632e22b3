import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.where(x > 0, x, torch.zeros_like(x))
