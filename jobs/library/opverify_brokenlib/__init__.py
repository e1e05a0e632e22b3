"""opverify_brokenlib: a release candidate of a Triton library with regressions and cheats of
library form planted on purpose. Every function here must fail qualification with the error
type its operator names (jobs/library_defects.json, jobs/library/tasks/*_torch.py). Built on
opverify_testlib's honest kernels where the defect is elsewhere."""
from .custom_ops import mul_custom_op
from .fallbacks import gelu_small_fallback, rms_norm_bf16_fallback
from .generated import mul_aten_ops
from .kernels import layer_norm_cached, softmax_aligned_only

__all__ = ["gelu_small_fallback", "layer_norm_cached", "mul_aten_ops", "mul_custom_op", "rms_norm_bf16_fallback",
           "softmax_aligned_only"]
