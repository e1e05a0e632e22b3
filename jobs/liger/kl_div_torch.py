"""Liger-Kernel kldiv_forward_triton with reduction "none" (the elementwise loss, float32 out)
against F.kl_div(log_q, p, reduction="none") in float32. Case parameters: rows, vocab, dtype."""
import torch
import torch.nn.functional as F

CASES = [dict(rows=32, vocab=5003, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, log_q, p):
        return F.kl_div(log_q.float(), p.float(), reduction="none")


def get_init_inputs():
    return []


def get_inputs(rows=32, vocab=5003, dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.log_softmax(torch.randn(rows, vocab), -1).to(dt), torch.softmax(torch.randn(rows, vocab), -1).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
