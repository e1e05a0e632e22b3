"""The operators, by family: reduction (softmax, sum, mean, prod, cumsum), elementwise
(gelu, silu, silu_mul, add, isclose), norm (layer_norm, rms_norm) and matmul."""
