#!/usr/bin/env python3
"""Writes the example tensors of jobs/examples (run with /usr/bin/python3).

softmax_*.npy: float16 softmax over rows; golden computed in float64 and
  rounded, actual computed in float16 arithmetic: a correct kernel, passes.
rmsnorm_*.npy: float16 RMSNorm over 4096 columns; actual accumulates the sum
  of squares in float16 (the classic defect): fails.
"""
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(20261129)

x = rng.standard_normal((64, 1000)).astype(np.float16)
x64 = x.astype(np.float64)
golden = np.exp(x64 - x64.max(axis=1, keepdims=True))
golden = (golden / golden.sum(axis=1, keepdims=True)).astype(np.float16)
e = np.exp((x - x.max(axis=1, keepdims=True)).astype(np.float32)).astype(np.float16)
actual = (e.astype(np.float32) / e.astype(np.float32).sum(axis=1, keepdims=True)).astype(np.float16)
np.save(os.path.join(HERE, "softmax_golden.npy"), golden)
np.save(os.path.join(HERE, "softmax_actual.npy"), actual)

x = (rng.standard_normal((16, 4096)) * 4).astype(np.float16)
x64 = x.astype(np.float64)
golden = (x64 / np.sqrt((x64 ** 2).mean(axis=1, keepdims=True) + 1e-6)).astype(np.float16)
acc = np.zeros((16, 1), np.float16)
for j in range(x.shape[1]):
    acc = (acc + x[:, j:j + 1] * x[:, j:j + 1]).astype(np.float16)
actual = (x.astype(np.float32) / np.sqrt(acc.astype(np.float32) / 4096 + 1e-6)).astype(np.float16)
np.save(os.path.join(HERE, "rmsnorm_golden.npy"), golden)
np.save(os.path.join(HERE, "rmsnorm_fp16_accumulator_actual.npy"), actual)
