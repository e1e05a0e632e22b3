"""Liger-Kernel group_norm_forward against F.group_norm on [batch, channels, h, w].
Case parameters: batch, channels, groups, hw, dtype."""
import torch
import torch.nn.functional as F

CASES = [dict(batch=4, channels=64, groups=8, hw=63, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x, w, b, groups):
        return F.group_norm(x, groups, w, b, 1e-5)


def get_init_inputs():
    return []


def get_inputs(batch=4, channels=64, groups=8, hw=63, dtype="float16"):
    dt = getattr(torch, dtype)
    return [(torch.randn(batch, channels, hw) * 2.0 + 0.5).to(dt), (torch.rand(channels) + 0.5).to(dt),
            torch.randn(channels).to(dt), groups]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
