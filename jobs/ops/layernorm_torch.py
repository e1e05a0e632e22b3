"""LayerNorm over the last dimension with an affine weight and bias.

The normalised size is fixed by get_init_inputs() (HIDDEN = 1000, not a power of two), so the
cases vary the number of rows and the dtype. weight and bias are nn.Parameters initialised
deterministically (torch.linspace), float32; they are cast to the input dtype for the reference,
as a model run in that dtype would hold them.

Case parameters: rows, dtype ("float16" | "bfloat16" | "float32").
"""
import torch

HIDDEN = 1000
EPS = 1e-5

CASES = [
    dict(rows=1, dtype="float16"),
    dict(rows=128, dtype="float16"),
    dict(rows=1023, dtype="float16"),
    dict(rows=4097, dtype="float16"),
    dict(rows=128, dtype="float32"),
    dict(rows=4097, dtype="float32"),
    dict(rows=128, dtype="bfloat16"),
    dict(rows=1023, dtype="bfloat16"),
]


class Model(torch.nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.hidden = hidden
        self.eps = EPS
        self.weight = torch.nn.Parameter(torch.linspace(0.5, 1.5, hidden))
        self.bias = torch.nn.Parameter(torch.linspace(-0.25, 0.25, hidden))

    def forward(self, x):
        return torch.nn.functional.layer_norm(
            x, (self.hidden,), self.weight.to(x.dtype), self.bias.to(x.dtype), self.eps)


def get_init_inputs():
    return [HIDDEN]


def get_inputs(rows=128, dtype="float16"):
    x = torch.randn(rows, HIDDEN, dtype=torch.float32) * 1.5 + 0.3
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
