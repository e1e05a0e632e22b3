#!/usr/bin/env python3
"""The judge of two builds, side by side in one run: is a change slower?

    /usr/bin/python3 perf/judge_ab.py BASE_PYTHON_DIR NEW_PYTHON_DIR [--rounds R] [--elements N]

Each *_PYTHON_DIR holds an opverify Python module (a Release build's
`build-bench/python`, as perf/run_judge_bench.sh makes). A round times
`opverify.compare` of the same tensors (perf/judge_throughput.py's pairs) in
one process per build, base and new in turn, the order swapped every round so
that neither always runs on a machine warmed or loaded by the other. Each
process reports its fastest of --repeats calls; the ratio new/base is the
median over the rounds of each round's ratio, so a noisy machine moves both
sides of a round together. Prints, per dtype, that median and the range."""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

CHILD = """
import json, sys, time
import numpy as np
sys.path.insert(0, {here!r})
from judge_throughput import make_pair
import opverify
rng = np.random.default_rng(2026)
out = {{}}
for dtype in {dtypes!r}:
    golden, actual, logical = make_pair(dtype, {elements}, rng)
    best = float("inf")
    for _ in range({repeats}):
        t0 = time.perf_counter()
        opverify.compare(golden, actual, dtype=logical)
        best = min(best, time.perf_counter() - t0)
    out[dtype] = best
print(json.dumps(out))
"""


def time_build(python_dir, args):
    code = CHILD.format(here=HERE, dtypes=args.dtypes.split(","), elements=args.elements, repeats=args.repeats)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=dict(os.environ, PYTHONPATH=python_dir), check=True)
    return json.loads(proc.stdout.splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base")
    parser.add_argument("new")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--elements", type=int, default=2 * 10**7)
    parser.add_argument("--dtypes", default="float32,float16,bfloat16")
    args = parser.parse_args()
    ratios = {dtype: [] for dtype in args.dtypes.split(",")}
    best = {"base": {}, "new": {}}
    for round_ in range(args.rounds):
        order = ["base", "new"] if round_ % 2 == 0 else ["new", "base"]
        seconds = {side: time_build(getattr(args, side), args) for side in order}
        for dtype in ratios:
            ratios[dtype].append(seconds["new"][dtype] / seconds["base"][dtype])
            for side in best:
                best[side][dtype] = min(best[side].get(dtype, float("inf")), seconds[side][dtype])
    print(f"{args.elements:.0e} elements, {args.rounds} rounds of base and new, fastest of {args.repeats} each")
    print(f"{'dtype':9} {'base ms':>8} {'new ms':>8} {'new/base':>9} {'range':>13}")
    for dtype, values in ratios.items():
        print(f"{dtype:9} {best['base'][dtype] * 1e3:8.1f} {best['new'][dtype] * 1e3:8.1f} "
              f"{statistics.median(values):9.3f} {min(values):6.3f}-{max(values):.3f}")


if __name__ == "__main__":
    main()
