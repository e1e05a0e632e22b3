import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        total = torch.zeros(x.shape[0], dtype=x.dtype)
        for column in range(x.shape[1]):
            total = total + x[:, column]
        return total
