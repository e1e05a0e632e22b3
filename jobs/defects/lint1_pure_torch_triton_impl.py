"""PLANTED DEFECT (lint type 1): no Triton kernel at all; the whole operator is PyTorch."""
import torch


class ModelNew(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)
