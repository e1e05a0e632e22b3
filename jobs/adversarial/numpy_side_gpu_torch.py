"""relu. The implementation runs its own Triton kernel into a scratch buffer
it throws away and computes the output on the host with numpy (no torch
compute operator, no Tensor.numpy call for the lint to see). The profile
shows its kernel running. Caught by ghost replay (`ghost_replay: true`):
with the kernel made a no-op, the outputs come back bit for bit."""
import torch

EXPECTED_ERROR_TYPE = "GhostReplayUnchanged"
CAUGHT_BY = "ghost replay"
MISSED_WITH = {"ghost_replay": False}
CASES = [dict(n=1 << 16), dict(n=1000)]


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_init_inputs():
    return []


def get_inputs(n=1 << 16):
    return [torch.randn(n)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
