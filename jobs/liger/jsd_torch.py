"""Liger-Kernel jsd_forward (generalised Jensen-Shannon divergence, beta 0.5) of log-probabilities:
the kernel writes the elementwise terms, the launcher sums them with torch.sum (LintError type 3:
the last reduction is PyTorch's). Case parameters: rows, vocab, dtype."""
import torch
import torch.nn.functional as F

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_LINT_TYPE = 3
CASES = [dict(rows=32, vocab=5003, dtype="float16")]


class Model(torch.nn.Module):
    def forward(self, log_q, log_p):
        q, p = log_q.float().exp(), log_p.float().exp()
        m = 0.5 * (p + q)
        jsd = 0.5 * (p * (log_p.float() - m.log())) + 0.5 * (q * (log_q.float() - m.log()))
        return (jsd.sum() / log_q.shape[0]).to(log_q.dtype)


def get_init_inputs():
    return []


def get_inputs(rows=32, vocab=5003, dtype="float16"):
    dt = getattr(torch, dtype)
    return [torch.log_softmax(torch.randn(rows, vocab), -1).to(dt), torch.log_softmax(torch.randn(rows, vocab), -1).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
