"""opverify_testlib: a small Triton operator library, the real library of opverify's own
tests (jobs/library.json). Kernels live in the submodules of ops/; this module exports the
operators and the ATen override switches (aten.enabled / enable / disable)."""
from .aten import disable, enable, enabled
from .ops.elementwise import add, gelu, isclose, silu, silu_mul
from .ops.matmul import matmul
from .ops.norm import layer_norm, rms_norm
from .ops.reduction import cumsum, mean_dim, prod_dim, softmax, sum_dim

__all__ = ["add", "cumsum", "disable", "enable", "enabled", "gelu", "isclose", "layer_norm", "matmul", "mean_dim",
           "prod_dim", "rms_norm", "silu", "silu_mul", "softmax", "sum_dim"]
