"""Liger-Kernel fused_linear_cross_entropy_forward: the mean cross-entropy of x @ W^T against targets,
in chunks, never holding the whole logits. The logits come from torch's matmul (cuBLAS) by design,
and the loss is summed with torch.sum: LintError type 3 (the anti-cheat's job is to say so).
Case parameters: rows, hidden, vocab, dtype."""
import torch
import torch.nn.functional as F

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3
CASES = [dict(rows=64, hidden=256, vocab=3001, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, x, w, target):
        return F.cross_entropy((x @ w.t()).float(), target).to(x.dtype)


def get_init_inputs():
    return []


def get_inputs(rows=64, hidden=256, vocab=3001, dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.randn(rows, hidden).to(dt), (torch.randn(vocab, hidden) * 0.05).to(dt),
            torch.randint(0, vocab, (rows,))]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
