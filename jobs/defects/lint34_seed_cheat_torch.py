"""Defect fixture (d, lint types 3 + 4): the seed's "typical cheat", verbatim in shape.

Reference: softmax(x @ wq^T) over the last dimension (x and wq are inputs, float32). The
implementation moves the whole computation into a module-level helper (torch.matmul, and the
tensor method .softmax to dodge a torch.softmax/F.softmax list), then launches a placeholder
identity kernel so that "a kernel is called". Both type 3 (reachable helper, tensor method) and
type 4 (placeholder kernel) apply; the seed reports them together. The numbers are right.
Expected: the static lint fails every case; regression type 3 (type 4 also detected).
Case parameters: tokens, dim, out_dim.
"""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3
EXPECTED_LINT_TYPES_ALSO = [4]

CASES = [
    dict(tokens=128, dim=64, out_dim=128),
    dict(tokens=1000, dim=96, out_dim=1023),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, wq):
        return torch.softmax(torch.matmul(x, wq.t()), dim=-1)


def get_init_inputs():
    return []


def get_inputs(tokens=128, dim=64, out_dim=128):
    x = torch.randn(tokens, dim, dtype=torch.float32)
    wq = torch.randn(out_dim, dim, dtype=torch.float32) / dim ** 0.5
    return [x, wq]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
