"""relu. The implementation computes the right output in its input's
memory (x.clamp_(min=0)): the reference, run first on its own copy, cannot
see it, and a caller that uses x afterwards reads relu(x). Caught because
each side gets its own clone of the inputs and the implementation's are
compared bit for bit with the originals afterwards (InputMutated)."""
import torch

EXPECTED_ERROR_TYPE = "InputMutated"
CAUGHT_BY = "inputs cloned per side and checked after the run"


class Model(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_init_inputs():
    return []


def get_inputs(rows=4, cols=1000):
    return [torch.randn(rows, cols)]
