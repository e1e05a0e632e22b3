import torch


class ModelNew(torch.nn.Module):
    """Right output, but it uses its input as scratch space: relu in place,
    then returns it. A caller that used x afterwards would read relu(x)."""

    def forward(self, x):
        return x.clamp_(min=0)
