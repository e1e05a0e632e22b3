"""fla.modules.activations.logsigmoid with temperature 2: log(sigmoid(x)) / 2, in float32,
rounded to the input's dtype. Case parameters: rows, cols, dtype."""
import torch
import torch.nn.functional as F

from fla_reference import wide

CASES = [dict(rows=1023, cols=1000, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x):
        return (F.logsigmoid(wide(x)) / 2.0).to(x.dtype)


def get_init_inputs():
    return []


def get_input_groups():
    return [get_inputs(**p) for p in CASES]


def get_inputs(rows=1023, cols=1000, dtype="bfloat16"):
    return [(torch.randn(rows, cols) * 4.0).to(getattr(torch, dtype))]
