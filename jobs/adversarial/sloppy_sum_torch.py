"""Row sum of bfloat16 values, written the sloppy way: one bfloat16 add per
column, so every partial sum is rounded to 8 bits. An implementation that
copies the reference's rounding matches it bit for bit, yet is far from the
true sum. With `golden_precision: fp64` the reference runs on float64
inputs and its output is rounded once to bfloat16: the copy fails."""
import torch

EXPECTED_ERROR_TYPE = "AccuracyError"
CAUGHT_BY = "golden_precision fp64"
MISSED_WITH = {"golden_precision": "native"}


class Model(torch.nn.Module):
    def forward(self, x):
        total = torch.zeros(x.shape[0], dtype=x.dtype)
        for column in range(x.shape[1]):
            total = total + x[:, column]
        return total


def get_init_inputs():
    return []


def get_inputs(rows=32, cols=2048):
    return [(torch.rand(rows, cols) + 0.5).to(torch.bfloat16)]
