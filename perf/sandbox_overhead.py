#!/usr/bin/env python3
"""What the executors' sandbox costs on jobs/cpu_smoke.json: the job run by
opverify-batch (1 rank, --no-ab) from two builds, or under two --sandbox
modes of one build, alternately in the same run on the same cores, so that
the machine's load falls on both alike.

  /usr/bin/python3 perf/sandbox_overhead.py --before BUILD_A --after BUILD_B [--runs 3]
  /usr/bin/python3 perf/sandbox_overhead.py --after build --modes none,bwrap,unshare

Prints each configuration's wall times, its median and the median's ratio to
the first configuration (docs/PERFORMANCE.md, "The sandbox's cost").
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
JOB = os.path.join(ROOT, "jobs", "cpu_smoke.json")


def run_once(build, mode, folder):
    run_dir = tempfile.mkdtemp(prefix="run-", dir=folder)
    command = [os.path.join(build, "runner", "opverify-batch"), JOB, "--backend", "cpu", "--run-dir", run_dir,
               "--no-ab", "--sandbox", mode]
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} exited {proc.returncode}:\n{proc.stderr[-3000:]}")
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", help="a build folder of the code before the change")
    parser.add_argument("--after", required=True, help="a build folder of the code after it")
    parser.add_argument("--modes", default="auto", help="comma-separated --sandbox modes (default auto)")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    configs = [(name, build, mode) for name, build in (("before", args.before), ("after", args.after)) if build
               for mode in args.modes.split(",")]
    times = {config: [] for config in configs}
    with tempfile.TemporaryDirectory(prefix="sandbox-overhead-") as folder:
        for _ in range(args.runs):
            for config in configs:  # alternately: the load falls on every configuration alike
                times[config].append(run_once(config[1], config[2], folder))
    first = statistics.median(times[configs[0]])
    print(f"jobs/cpu_smoke.json, opverify-batch 1 rank --no-ab, {args.runs} runs each")
    for (name, build, mode), seconds in times.items():
        median = statistics.median(seconds)
        print(f"{name:6} {mode:8} median {median:6.2f} s  x{median / first:5.2f}  runs "
              + " ".join(f"{s:.2f}" for s in seconds) + f"  ({build})")


if __name__ == "__main__":
    main()
