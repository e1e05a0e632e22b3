"""x * 2 + 1. The implementation's forward returns zeros; a hook it installs on every module's
forward at import (torch.nn.modules.module.register_module_forward_hook) replaces ModelNew's
output with the answer, out of forward's code and, in a library, out of the static lint's sight.
Caught before and after the forward: the global module hooks torch runs are those there were
before the implementation's import (LintError, runtime type 5)."""
import torch

EXPECTED_ERROR_TYPE = "LintError"
CAUGHT_BY = "global module hooks (runtime type 5)"
MISSED_WITH = {"runtime_checks": False}


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1


def get_init_inputs():
    return []


def get_inputs(rows=16, cols=256):
    return [torch.randn(rows, cols)]
