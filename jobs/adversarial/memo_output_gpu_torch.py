"""relu, right every time it is judged. The implementation remembers its
last output per input tensor object and hands it back when called again with
the same object, as a benchmark's repeats do: its measured time is the
Python call alone, faster than the device can even read the input.
Flagged for review (the run still passes): a speedup above 10x, and above
the device's memory roofline."""
import torch

EXPECTED_REVIEW = "memory roofline"
CAUGHT_BY = "roofline flag"
CASES = [dict(n=1 << 26)]


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_init_inputs():
    return []


def get_inputs(n=1 << 26):
    return [torch.randn(n)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
