#!/usr/bin/env python3
"""A night on a node of several GPUs, simulated from a night measured on one (issue 23: "the
path to 5,000 cases with every check on in under 15 minutes on one 8-GPU node, shown by
measurement on one GPU and by simulation for eight").

Input: a measured run folder (its summary.json `timeline`: each work item's operator, rank,
cases and time on its rank, start-up included). The simulation:

1. checks itself on the measured night: the measured items, in the order they were handed out,
   replayed over the measured ranks as the coordinator hands them out (the next item to the
   first rank free), each taking its measured time; the replayed wall against the measured one;
2. makes a night of about --cases cases from the measured operators (each copied as often as
   it takes), each copy expected to cost what the operator cost (one synthetic --previous);
3. asks opverify-batch itself for the plan (`--dry-run --previous ... --plan-ranks N`, for one
   GPU's ranks and for --gpus GPUs' ranks, under each --schedule), so that the plan is the
   product's, not a copy of its rules;
4. runs each plan as the coordinator does, an item taking its operator's measured start-up plus
   its share of the operator's remaining time by cases.

What it assumes, said with every result: each GPU of the node runs its ranks as the measured
GPU did (the same device, the same cores per GPU: an 8-GPU node with 8 times the cores), so an
item takes what it took there; the ranks of different GPUs share nothing but the plan. A copy of
an operator costs what the operator cost on the measured night (its compile included: a night
one, not a night on warm caches, unless the measured night was one).

    /usr/bin/python3 perf/node_simulation.py RUN_DIR [--cases 5000] [--gpus 8] [--json OUT]
"""
import argparse
import heapq
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
TASK = os.path.join(ROOT, "tests", "fixtures", "cpu_ops", "add_sweep_torch.py")
IMPL = os.path.join(ROOT, "tests", "fixtures", "cpu_ops", "add_sweep_cpu_impl.py")


def measured(run_dir):
    """The measured night: its items (op, cases, seconds, start-up, order) and its ranks and wall."""
    path = run_dir if run_dir.endswith(".json") else os.path.join(run_dir, "summary.json")
    with open(path) as f:
        timeline = json.load(f)["timeline"]
    items = []
    for item in timeline["items"]:
        items.append({"op": item["op"], "cases": int(item.get("cases", 0)), "order": item.get("item", len(items)),
                      "seconds": max(0.0, item["end_s"] - item["start_s"]),
                      "startup_s": float(item.get("startup_s", 0.0)), "rank": item.get("rank")})
    return {"items": items, "ranks": int(timeline["ranks"]), "wall_s": float(timeline["wall_s"])}


def replay(durations, ranks):
    """The coordinator's hand-out: each item, in order, to the first rank free. Returns the
    wall and the busy rank-seconds."""
    free = [0.0] * ranks
    heapq.heapify(free)
    wall = 0.0
    for seconds in durations:
        start = heapq.heappop(free)
        end = start + seconds
        wall = max(wall, end)
        heapq.heappush(free, end)
    return wall, sum(durations)


def operators_of(items):
    """Per operator: its seconds over all its items, its cases and its start-up per item."""
    ops = {}
    for item in items:
        op = ops.setdefault(item["op"], {"seconds": 0.0, "cases": 0, "startup": []})
        op["seconds"] += item["seconds"]
        op["cases"] += item["cases"]
        op["startup"].append(item["startup_s"])
    for op in ops.values():
        op["startup_s"] = sum(op["startup"]) / len(op["startup"])
    return ops


def synthetic_night(ops, copies, folder):
    """A manifest of `copies` copies of each operator (same case count), a --previous run
    folder whose timeline gives each copy its operator's seconds, and each copy's operator."""
    tasks = os.path.join(folder, "ops")
    os.makedirs(tasks)
    operators, items, original = [], [], {}
    for name, op in sorted(ops.items()):
        for copy in range(copies):
            copy_name = f"{re.sub(r'[^A-Za-z0-9_]', '_', name)}__{copy}"
            original[copy_name] = name
            shutil.copy(TASK, os.path.join(tasks, f"{copy_name}_torch.py"))
            shutil.copy(IMPL, os.path.join(tasks, f"{copy_name}_cpu_impl.py"))
            operators.append({"name": copy_name, "dir": tasks,
                              "sweep": {"n": [8 * (k + 1) for k in range(max(op["cases"], 1))], "dtype": ["float32"]}})
            items.append({"op": copy_name, "rank": 0, "start_s": 0.0, "end_s": op["seconds"]})
    manifest = os.path.join(folder, "night.json")
    with open(manifest, "w") as f:
        json.dump({"name": "simulated", "defaults": {"impl_name": "cpu_impl", "lint": False}, "operators": operators}, f)
    previous = os.path.join(folder, "previous")
    os.makedirs(previous)
    with open(os.path.join(previous, "summary.json"), "w") as f:
        json.dump({"timeline": {"ranks": 1, "wall_s": 0, "items": items}}, f)
    return manifest, previous, original


def plan(batch, manifest, previous, ranks, schedule, folder):
    """opverify-batch's own plan for `ranks` ranks: [(operator copy, its cases in the item)]."""
    proc = subprocess.run([batch, manifest, "--backend", "cpu", "--run-dir", os.path.join(folder, f"dry-{schedule}-{ranks}"),
                           "--dry-run", "--previous", previous, "--plan-ranks", str(ranks), "--schedule", schedule],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"node_simulation: the plan failed: {proc.stderr[-2000:]}")
    found = re.findall(r"item \d+: (\S+?)(?: chunk \d+ of \d+)? \((\d+) sweep cases\)", proc.stdout)
    if not found:
        sys.exit(f"node_simulation: no items in the plan:\n{proc.stdout[-2000:]}")
    return [(name, int(cases)) for name, cases in found]


def item_seconds(op, cases):
    """An item of `cases` of the operator's cases: one start-up and its share of the rest."""
    if op["cases"] <= 0:
        return op["seconds"]
    work = max(0.0, op["seconds"] - op["startup_s"] * len(op["startup"]))
    return op["startup_s"] + work * cases / op["cases"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", help="a measured run folder (or its summary.json) with a timeline")
    parser.add_argument("--cases", type=int, default=5000, help="the simulated night's cases, about (default 5000)")
    parser.add_argument("--gpus", type=int, default=8, help="GPUs of the simulated node (default 8)")
    parser.add_argument("--ranks-per-gpu", type=int, default=0, help="default: the measured night's ranks")
    parser.add_argument("--build", default=os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build")))
    parser.add_argument("--json", help="write the results here too")
    args = parser.parse_args()
    batch = os.path.join(args.build, "runner", "opverify-batch")
    night = measured(args.run)
    per_gpu = args.ranks_per_gpu or night["ranks"]
    ordered = sorted(night["items"], key=lambda item: item["order"])
    replayed, busy = replay([item["seconds"] for item in ordered], night["ranks"])
    cases = sum(item["cases"] for item in night["items"])
    ops = operators_of(night["items"])
    result = {"measured": {"run": os.path.abspath(args.run), "ranks": night["ranks"], "operators": len(ops),
                           "cases": cases, "wall_s": night["wall_s"], "replayed_wall_s": replayed,
                           "rank_seconds_in_items": busy},
              "assumes": "each GPU runs its ranks as the measured GPU did (same device, same cores per GPU); "
                         "a copy of an operator costs what it cost on the measured night",
              "simulated": []}
    print(f"measured: {len(ops)} operators, {cases} cases, {night['ranks']} ranks on one GPU, "
          f"wall {night['wall_s']:.1f} s; replayed in the measured order: {replayed:.1f} s "
          f"({replayed / night['wall_s']:.3f} of the measured)")
    copies = max(1, math.ceil(args.cases / max(cases, 1)))
    with tempfile.TemporaryDirectory(prefix="opverify-node-sim-") as folder:
        manifest, previous, original = synthetic_night(ops, copies, folder)
        total = copies * cases
        print(f"simulated night: each operator {copies} times: {len(ops) * copies} operators, {total} cases")
        print(f"{'GPUs':>4} {'ranks':>5} {'schedule':>8} {'items':>6} {'wall s':>9} {'cases/s':>8} {'idle':>6}")
        for gpus in sorted({1, args.gpus}):
            ranks = gpus * per_gpu
            for schedule in ("fifo", "cost"):
                items = plan(batch, manifest, previous, ranks, schedule, folder)
                durations = [item_seconds(ops[original[name]], n) for name, n in items]
                wall, work = replay(durations, ranks)
                idle = 1 - work / (wall * ranks) if wall > 0 else 0.0
                row = {"gpus": gpus, "ranks": ranks, "schedule": schedule, "items": len(items), "wall_s": wall,
                       "cases_per_s": total / wall if wall > 0 else 0.0, "idle_fraction": idle, "cases": total}
                result["simulated"].append(row)
                print(f"{gpus:>4} {ranks:>5} {schedule:>8} {len(items):>6} {wall:>9.1f} {row['cases_per_s']:>8.2f} "
                      f"{idle:>6.1%}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
