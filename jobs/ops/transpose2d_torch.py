"""2-D transpose with a contiguous output (x.transpose(0, 1).contiguous()).

NON-COMPUTE operator: it only moves data, so it must be judged bitwise (the seed's
--non-compute). The first elements of every input are set to +inf, -inf, NaN and -0.0 so that a
bitwise judge sees special bit patterns.
Case parameters: rows, cols, dtype ("float16" | "bfloat16" | "float32").
"""
import torch

NON_COMPUTE = True

CASES = [
    dict(rows=1, cols=1, dtype="float32"),
    dict(rows=128, cols=1000, dtype="float16"),
    dict(rows=1023, cols=77, dtype="float16"),
    dict(rows=4097, cols=33, dtype="bfloat16"),
    dict(rows=256, cols=512, dtype="float32"),
    dict(rows=1000, cols=1023, dtype="float32"),
    dict(rows=64, cols=4097, dtype="bfloat16"),
]


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x.transpose(0, 1).contiguous()


def get_init_inputs():
    return []


def get_inputs(rows=128, cols=1000, dtype="float16"):
    x = torch.randn(rows, cols, dtype=torch.float32)
    specials = torch.tensor([float("inf"), float("-inf"), float("nan"), -0.0])
    flat = x.view(-1)
    k = 4 if flat.numel() >= 4 else flat.numel()
    flat[:k] = specials[:k]
    return [x.to(getattr(torch, dtype))]


def get_input_groups():
    return [get_inputs(**params) for params in CASES]
