"""x + 0.5 * y with broadcasting: y is a row vector [cols] ("row"), a column [rows, 1] ("col"),
[1, 1] ("scalar") or the full [rows, cols] ("full"). Case parameters: rows, cols, dtype, bcast."""
import torch

CASES = [dict(rows=33, cols=1000, dtype="float16", bcast="row")]
SHAPES = {"row": lambda r, c: [c], "col": lambda r, c: [r, 1], "scalar": lambda r, c: [1, 1],
          "full": lambda r, c: [r, c]}


class Model(torch.nn.Module):
    def forward(self, x, y):
        return torch.add(x, y, alpha=0.5)


def get_init_inputs():
    return []


def get_inputs(rows=33, cols=1000, dtype="float16", bcast="row"):
    dt = getattr(torch, dtype)
    return [torch.randn(rows, cols).to(dt), torch.randn(SHAPES[bcast](rows, cols)).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
