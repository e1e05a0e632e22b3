#!/usr/bin/env python3
"""Judge throughput on large tensors, against two baselines measured in the
same run on the same cores:

  (a) numpy: PRECISION.md's rules with whole-array operations (numpy_judge.py),
      the way the seed scripts write theirs;
  (b) the memory floor: reading both tensors once, with the judge's threads.

Usage: /usr/bin/python3 perf/judge_throughput.py [--elements N] [--repeats R]
(run through perf/run_judge_bench.sh, which builds first).
"""
import argparse
import os
import platform
import statistics
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import numpy_judge  # noqa: E402


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def bf16_bits(x32):
    """float32 -> bfloat16 bits, round to nearest even."""
    bits = x32.view(np.uint32)
    return ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)


def widen_bf16(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def make_pair(dtype, n, rng):
    golden = rng.standard_normal(n, dtype=np.float32)
    noise = rng.standard_normal(n, dtype=np.float32) * np.float32(1e-4)
    actual = golden * (np.float32(1) + noise)
    if dtype == "float32":
        return golden, actual, None
    if dtype == "float16":
        return golden.astype(np.float16), actual.astype(np.float16), None
    return bf16_bits(golden), bf16_bits(actual), "bfloat16"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--elements", type=int, default=10**8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--numpy-repeats", type=int, default=2)
    parser.add_argument("--dtypes", default="float32,float16,bfloat16")
    args = parser.parse_args()
    import opverify

    rng = np.random.default_rng(2026)
    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
          f"{args.elements:.0e} elements per tensor; medians of {args.repeats} "
          f"(numpy: {args.numpy_repeats})")
    header = (f"{'dtype':9} {'opverify ms':>12} {'Gelem/s':>8} {'floor ms':>9} {'numpy ms':>9} "
              f"{'vs numpy':>9} {'vs floor':>9}")
    print(header)
    print("-" * len(header))
    for dtype in args.dtypes.split(","):
        golden, actual, logical = make_pair(dtype, args.elements, rng)
        verdict = opverify.compare(golden, actual, dtype=logical)
        ours = timed(lambda: opverify.compare(golden, actual, dtype=logical), args.repeats)
        floor = timed(lambda: opverify._read_once(golden, actual), args.repeats)

        def numpy_run():
            if logical == "bfloat16":
                g, a = widen_bf16(golden), widen_bf16(actual)
            else:
                g, a = golden.astype(np.float64), actual.astype(np.float64)
            return numpy_judge.judge(g, a, dtype)

        error_type, metrics = numpy_run()
        agree = (error_type is None) == verdict["passed"]
        base = timed(numpy_run, args.numpy_repeats)
        print(f"{dtype:9} {ours * 1e3:12.1f} {args.elements / ours / 1e9:8.2f} {floor * 1e3:9.1f} "
              f"{base * 1e3:9.1f} {base / ours:8.1f}x {ours / floor:8.2f}x"
              + ("" if agree else "  VERDICTS DIFFER"))
        del golden, actual


if __name__ == "__main__":
    main()
