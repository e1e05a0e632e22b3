"""Liger-Kernel cross_entropy_forward, reduction "none" (the per-row loss) against F.cross_entropy in
float32, with about 10% of targets at ignore_index -100. Its launcher counts the non-ignored
targets and checks their bounds with torch on the device (target != ignore_index, sum, max,
min): the anti-cheat sees PyTorch compute in the library (LintError type 3) although every
floating-point step of the loss is the Triton kernel's (docs/LIBRARIES.md).
Case parameters: rows, vocab, dtype."""
import torch
import torch.nn.functional as F

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3
CASES = [dict(rows=64, vocab=5003, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, logits, target):
        return F.cross_entropy(logits.float(), target, reduction="none", ignore_index=-100).to(logits.dtype)


def get_init_inputs():
    return []


def get_inputs(rows=64, vocab=5003, dtype="float16"):
    target = torch.randint(0, vocab, (rows,))
    target[torch.rand(rows) < 0.1] = -100
    return [(torch.randn(rows, vocab) * 2.0).to(getattr(torch, dtype)), target]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
