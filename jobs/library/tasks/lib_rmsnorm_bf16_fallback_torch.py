"""Defect of library form: RMSNorm whose library function sends bfloat16 to a torch path
written through getattr (torch.rsqrt, Tensor.pow, mean), out of a name scan's sight. The
manifest runs it with the static lint off: the runtime evidence alone must fail the bfloat16
cases (runtime type 3: aten compute dispatched by the forward); float16 and float32 run the
library's kernel and pass. Case parameters: rows, cols, dtype."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
EXPECTED_REGRESSION_TYPE = 3
CASES = [dict(rows=33, cols=1000, dtype="bfloat16")]


class Model(torch.nn.Module):
    def forward(self, x, w):
        xf = x.float()
        y = xf * torch.rsqrt(xf.pow(2).mean(dim=-1, keepdim=True) + 1e-6) * w.float()
        return y.to(x.dtype)


def get_init_inputs():
    return []


def get_inputs(rows=33, cols=1000, dtype="bfloat16"):
    dt = getattr(torch, dtype)
    return [(torch.randn(rows, cols) * 2.0).to(dt), (torch.rand(cols) + 0.5).to(dt)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
