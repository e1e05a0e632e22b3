#!/usr/bin/env python3
"""What the runner's check of the inputs' bytes costs a case (docs/PERFORMANCE.md, "The inputs'
bytes checked outside the implementation's process"): kept_inputs_digest, which each executor
now runs once per case run (the reference's over the inputs as built, the implementation's after
ModelNew.forward), against input_changes, the comparison the implementation's executor already
made in its own process, timed in the same run on the same inputs (a float32 tensor of each
size), alternating, --runs times each; medians and their ratio.

  /usr/bin/python3 perf/input_check_cost.py [--runs 7] [--sizes-mib 1 16 64]
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "runner", "executor"))

import torch  # noqa: E402

from opverify_runtime.case_io import input_changes, kept_inputs_digest  # noqa: E402


def timed(fn):
    started = time.perf_counter()
    fn()
    return (time.perf_counter() - started) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes-mib", type=int, nargs="+", default=[1, 16, 64])
    args = parser.parse_args()
    rows = []
    for mib in args.sizes_mib:
        inputs = [torch.randn(mib * (1 << 18))]  # float32: 4 bytes an element
        used = [inputs[0].clone()]
        digest, changes = [], []
        for _ in range(args.runs):
            digest.append(timed(lambda: kept_inputs_digest(used, torch)))
            changes.append(timed(lambda: input_changes(inputs, used, torch)))
        d, c = statistics.median(digest), statistics.median(changes)
        rows.append({"input_mib": mib, "kept_inputs_digest_ms": round(d, 2), "input_changes_ms": round(c, 2),
                     "ratio": round(d / c, 3)})
        print(f"{mib:4d} MiB: kept_inputs_digest {d:8.2f} ms, input_changes {c:8.2f} ms, ratio {d / c:.3f}")
    print(json.dumps(rows))


if __name__ == "__main__":
    main()
