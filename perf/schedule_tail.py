#!/usr/bin/env python3
"""The tail of a night: opverify-batch's cost-aware plan (--schedule cost)
against the plan before it (--schedule fifo), in the same run on the same
cores (issue 23's acceptance benchmark).

  /usr/bin/python3 perf/schedule_tail.py [--operators 200] [--ranks 8] [--build build]

Writes N planted torch-only operators (cpu backend) into a temporary folder:
their implementations sleep, so the measurement is about scheduling, not the
machine's cores (which other work may share):
  - "big": one operator with many cases, about --big-share of all the
    planted work (sleep per case);
  - a few "slow" operators of 2 cases that sleep long (nothing in their
    cases says so: only a previous night knows);
  - the rest: 2 cases each, sleeping 0.1 to 0.5 s.
Then runs, for each scheduler, night one (no history) and night two
(--previous of its own night one), under `mpirun -np R --oversubscribe`
with --no-bench --no-ab, and prints wall, rank-seconds, idle share (from
summary.json's time_split) and the wall ratio new/old. --json FILE keeps
the numbers.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

from runner_overhead import TASK  # the same torch-only task (x * 2 + 1, get_inputs(n))

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))

IMPL = '''import time

import torch

SLEEP_S = {sleep_s!r}


class ModelNew(torch.nn.Module):
    def forward(self, x):
        time.sleep(SLEEP_S)
        return x * 2 + 1
'''


def plant(folder, operators, big_share, slow, slow_sleep, sleep_scale):
    """The manifest and its operators; returns (manifest path, planted seconds of sleep, of them in "big")."""
    ops = []
    small = operators - 1 - slow
    sleeps = {}
    for i in range(small):
        sleeps[f"op{i:03d}"] = (sleep_scale * (0.1 + 0.4 * ((i * 37) % 100) / 100), 2)
    for i in range(slow):
        sleeps[f"slow{i:02d}"] = (sleep_scale * slow_sleep, 2)
    rest = sum(s * n for s, n in sleeps.values())
    big_cases = 60
    big_total = big_share / (1 - big_share) * rest
    sleeps["big"] = (big_total / big_cases, big_cases)
    names = sorted(sleeps)  # "big" sits among the others in manifest order, as a library's would
    for name in names:
        sleep_s, cases = sleeps[name]
        with open(os.path.join(folder, f"{name}_torch.py"), "w") as f:
            f.write(TASK)
        with open(os.path.join(folder, f"{name}_cpu_impl.py"), "w") as f:
            f.write(IMPL.format(sleep_s=round(sleep_s, 4)))
        ops.append({"name": name, "dir": folder, "sweep": {"n": [64 + k for k in range(cases)]}})
    manifest = os.path.join(folder, "tail.json")
    with open(manifest, "w") as f:
        json.dump({"name": "schedule_tail", "defaults": {"impl_name": "cpu_impl", "lint": False, "timeout_s": 120},
                   "operators": ops}, f)
    return manifest, sum(s * n for s, n in sleeps.values()), sleeps["big"][0] * big_cases


def run_night(batch, manifest, run_dir, ranks, schedule, previous=None):
    command = ["mpirun", "-np", str(ranks), "--oversubscribe", batch, manifest, "--backend", "cpu", "--run-dir",
               run_dir, "--no-bench", "--no-ab", "--schedule", schedule, "-q"]
    if previous:
        command += ["--previous", previous]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, env=env, timeout=3600)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    summary = json.load(open(os.path.join(run_dir, "summary.json")))
    split = summary["time_split"]
    items = summary["timeline"]["items"]
    last_end = max(item["end_s"] for item in items)
    return {"schedule": schedule, "night": 2 if previous else 1, "wall_s": round(wall, 1),
            "run_wall_s": round(summary["timing"]["run_wall_s"], 1), "rank_seconds": round(split["rank_seconds"], 1),
            "idle_s": round(split["idle_s"], 1), "idle_fraction": round(split["idle_fraction"], 4),
            "startup_s": round(split["startup_s"], 1), "items": len(items),
            "big_chunks": sum(1 for item in items if item["op"] == "big"), "last_item_end_s": round(last_end, 1),
            "cases": summary["totals"]["cases"], "failed": summary["totals"]["failed"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--operators", type=int, default=200)
    parser.add_argument("--ranks", type=int, default=8)
    parser.add_argument("--big-share", type=float, default=0.3)
    parser.add_argument("--slow", type=int, default=4, help="operators of 2 cases that sleep --slow-sleep each")
    parser.add_argument("--slow-sleep", type=float, default=3.0)
    parser.add_argument("--sleep-scale", type=float, default=1.0,
                        help="every planted sleep times this: where executor start-up is slow (a loaded "
                             "machine), a larger scale keeps the run about scheduling")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--json", help="also write the numbers here")
    args = parser.parse_args()
    batch = os.path.join(args.build, "runner", "opverify-batch")
    folder = tempfile.mkdtemp(prefix="schedule-tail-")
    manifest, planted_s, big_s = plant(folder, args.operators, args.big_share, args.slow, args.slow_sleep,
                                       args.sleep_scale)
    print(f"{args.operators} operators, {planted_s:.0f} s of planted sleep ({big_s:.0f} s in 'big', "
          f"{100 * big_s / planted_s:.0f}%), {args.ranks} ranks: at best {planted_s / args.ranks:.0f} s of wall "
          f"before start-up; folder {folder}", flush=True)
    results = []
    for schedule in ("fifo", "cost"):
        night1 = os.path.join(folder, f"{schedule}-night1")
        results.append(run_night(batch, manifest, night1, args.ranks, schedule))
        print(json.dumps(results[-1]), flush=True)
        results.append(run_night(batch, manifest, os.path.join(folder, f"{schedule}-night2"), args.ranks, schedule,
                                 previous=night1))
        print(json.dumps(results[-1]), flush=True)
    print("\n| scheduler | night | wall s | rank-s | idle | start-up rank-s | items |")
    print("|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['schedule']} | {r['night']} | {r['run_wall_s']} | {r['rank_seconds']} | "
              f"{100 * r['idle_fraction']:.1f}% | {r['startup_s']} | {r['items']} |")
    for night in (1, 2):
        old, new = [next(r for r in results if r["schedule"] == s and r["night"] == night) for s in ("fifo", "cost")]
        print(f"night {night}: wall cost/fifo = {new['run_wall_s'] / old['run_wall_s']:.2f}, "
              f"idle {100 * old['idle_fraction']:.1f}% -> {100 * new['idle_fraction']:.1f}%")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"planted_s": planted_s, "big_s": big_s, "operators": args.operators, "ranks": args.ranks,
                       "results": results}, f, indent=1)


if __name__ == "__main__":
    main()
