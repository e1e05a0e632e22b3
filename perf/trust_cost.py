#!/usr/bin/env python3
"""What the trust boundary (docs/SECURITY.md) costs: jobs/cpu_smoke.json
through opverify-batch on the cpu backend, in turn with the golden made in
the implementation's own pooled executor (OPVERIFY_SHARED_GOLDEN=1, the path
before the boundary, "shared"), across the boundary with each implementation
executor started when it is needed (OPVERIFY_NO_SPARE=1, "boundary"), and
across the boundary with the rank's spare executors started ahead ("spare",
the default), in the same run, and the ratios of their wall times
(verification and the performance phase; medians).

  /usr/bin/python3 perf/trust_cost.py [--build build] [--runs 3] [--ranks 1] [--job jobs/cpu_smoke.json]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


PATHS = {"shared": {"OPVERIFY_SHARED_GOLDEN": "1"}, "boundary": {"OPVERIFY_NO_SPARE": "1"}, "spare": {}}


def one_run(build, job, ranks, run_dir, path):
    env = dict(os.environ, **MPI_ENV)
    for name in ("OPVERIFY_SHARED_GOLDEN", "OPVERIFY_NO_SPARE"):
        env.pop(name, None)
    env.update(PATHS[path])
    command = [os.path.join(build, "runner", "opverify-batch"), job, "--backend", "cpu", "--run-dir", run_dir]
    if ranks > 1:
        command = ["mpirun", "-np", str(ranks), "--oversubscribe"] + command
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, timeout=1800, env=env)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    with open(os.path.join(run_dir, "summary.json")) as f:
        totals = json.load(f)["totals"]
    return wall, totals


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--job", default=os.path.join(ROOT, "jobs", "cpu_smoke.json"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--ranks", type=int, default=1)
    args = parser.parse_args()
    walls = {path: [] for path in PATHS}
    with tempfile.TemporaryDirectory(prefix="opverify-trust-cost-") as folder:
        for k in range(args.runs):
            for label in PATHS:  # in turn: the machine's load hits each alike
                wall, totals = one_run(args.build, args.job, args.ranks, os.path.join(folder, f"{label}{k}"), label)
                walls[label].append(wall)
                print(f"run {k + 1} {label:8s} {wall:7.2f} s  cases {totals.get('cases')}", flush=True)
    shared, boundary, spare = (statistics.median(walls[path]) for path in PATHS)
    operators = len(json.load(open(args.job))["operators"])
    print(json.dumps({"job": os.path.relpath(args.job, ROOT), "ranks": args.ranks, "runs": args.runs,
                      "operators": operators, "shared_golden_s": round(shared, 2), "boundary_s": round(boundary, 2),
                      "spare_s": round(spare, 2), "ratio": round(boundary / shared, 3),
                      "spare_ratio": round(spare / shared, 3), "spare_vs_boundary": round(spare / boundary, 3),
                      "extra_s_per_operator": round((boundary - shared) / operators, 2),
                      "spare_extra_s_per_operator": round((spare - shared) / operators, 2)}, indent=1))


if __name__ == "__main__":
    main()
