"""Matrix product. The implementation computes it with operator.matmul(a, b)
(aten::mm on the device, reached through the operator module, which the
static lint does not follow), then runs its own Triton kernel over the
result (a scale by 1.0) so the lint sees a kernel launched and no torch
function called. Caught by the trace of the torch operators ModelNew.forward
dispatches: aten::mm is compute outside its kernels (runtime type 3)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_REGRESSION_TYPE = 3
CAUGHT_BY = "dispatch trace of the torch operators forward runs"
CASES = [dict(M=256, N=256, K=256), dict(M=128, N=512, K=64)]


class Model(torch.nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_init_inputs():
    return []


def get_inputs(M=256, N=256, K=256):
    return [torch.randn(M, K), torch.randn(K, N)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
