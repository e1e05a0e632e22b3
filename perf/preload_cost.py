#!/usr/bin/env python3
"""What the library's start-up cuts save (docs/PERFORMANCE.md, "The library
preloaded by the spares", "The library's bytecode"): a batch of
library-backed operators on the cpu backend, run in turn with both (the
default: the library's sources compiled to bytecode before the first
executor, and the spares importing the library as they start), with the
preload alone (OPVERIFY_NO_BYTECODE=1) and with neither (also
OPVERIFY_NO_PRELOAD=1: as before), in the same run; the medians over the
runs of their wall times, of each run's median wait of an operator for its
implementation executor (`open_ms`), of the spares' library import and of
the executors' import of opverify's runtime (summary.json's
executor_starts), and whether every path gave every case the same verdict.
Each run starts from no bytecode: the library's is removed, and the runtime
is a fresh copy (OPVERIFY_RUNTIME_DIR), as a device receives it; with the
bytecode on, the runtime's is compiled with the library's.

The library is generated into a temporary folder, shaped like a large
Triton library carried as source (FlagGems: 838 files, 6.4 MB): --modules
modules of --kib KiB of plain functions each, all imported by the package,
which the executors compile from source at every import (the sandbox keeps
the library folder read-only, so no bytecode is cached, as for a library
carried as source on a device). Each operator's implementation calls one of
its functions; the lint is off (the library computes with torch on the cpu).

  /usr/bin/python3 perf/preload_cost.py [--build build] [--runs 3] [--operators 12] [--cases 4]
                                        [--modules 400] [--kib 8]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "tools"))
import verdict_list  # noqa: E402 - tools/verdict_list.py: a run's verdicts from junit.xml

# The default (spares preload the library, its sources compiled to bytecode first), the preload
# alone, and neither (as before both).
PATHS = {"both": {}, "preload": {"OPVERIFY_NO_BYTECODE": "1"},
         "neither": {"OPVERIFY_NO_PRELOAD": "1", "OPVERIFY_NO_BYTECODE": "1"}}

TASK = '''import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * {factor}


def get_inputs(n=256):
    return [torch.randn(n)]


def get_init_inputs():
    return []
'''

IMPL = '''import torch

from genlib.mod{index:04d} import scale_{index}


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return scale_{index}(x)
'''


def module_text(index, kib):
    """One generated module: plain functions until it holds `kib` KiB."""
    parts = [f'"""Generated module {index} of genlib (perf/preload_cost.py)."""\n',
             f"def scale_{index}(x):\n    return x * {1.0 + index % 7}\n\n"]
    k = 0
    while sum(map(len, parts)) < kib * 1024:
        parts.append(f"def helper_{index}_{k}(a, b, c={k}):\n"
                     f"    total = a * {k} + b - c\n"
                     f"    values = [total + i for i in range({k % 5 + 1})]\n"
                     f"    return sum(values) if values else total\n\n")
        k += 1
    return "".join(parts)


def write_library_and_job(folder, modules, kib, operators, cases):
    lib = os.path.join(folder, "lib", "genlib")
    os.makedirs(lib)
    for index in range(modules):
        with open(os.path.join(lib, f"mod{index:04d}.py"), "w") as f:
            f.write(module_text(index, kib))
    with open(os.path.join(lib, "__init__.py"), "w") as f:
        f.write('"""A generated library (perf/preload_cost.py): every module imported by the package."""\n')
        f.write("".join(f"from . import mod{index:04d}\n" for index in range(modules)))
    ops = os.path.join(folder, "ops")
    os.makedirs(ops)
    for index in range(operators):
        with open(os.path.join(ops, f"gen{index}_torch.py"), "w") as f:
            f.write(TASK.format(factor=1.0 + index % 7))
        with open(os.path.join(ops, f"gen{index}_cpu_impl.py"), "w") as f:
            f.write(IMPL.format(index=index))
    job = {"name": "preload_cost", "description": "perf/preload_cost.py's generated library-backed operators",
           "defaults": {"impl_name": "cpu_impl", "lint": False, "timeout_s": 300, "seeds": 1,
                        "library": ["genlib"], "python_path": ["lib"], "bench": {"enabled": False}},
           "operators": [{"name": f"gen{index}", "dir": "ops", "sweep": {"n": [(1 << 20) + k for k in range(cases)]}}
                         for index in range(operators)]}
    path = os.path.join(folder, "job.json")
    with open(path, "w") as f:
        json.dump(job, f, indent=1)
    return path


def starts(run_dir):
    """The operators' wait for their executor and the spares' library import (medians, ms), from
    summary.json's executor_starts."""
    with open(os.path.join(run_dir, "summary.json")) as f:
        figures = json.load(f).get("executor_starts") or {}
    own = figures.get("own_ms_median") or {}
    return {"open_ms": (figures.get("open_ms") or {}).get("median", 0.0),
            "preload_ms": own.get("preload_ms", 0.0), "runtime_ms": own.get("runtime_ms", 0.0)}


def one_run(build, job, run_dir, path):
    env = dict(os.environ)
    for name in ("OPVERIFY_NO_PRELOAD", "OPVERIFY_NO_BYTECODE"):
        env.pop(name, None)
    env.update(PATHS[path])
    # Each path starts without the bytecode an earlier run wrote, the library's and opverify's
    # runtime's (a fresh copy of it, as a device receives: OPVERIFY_RUNTIME_DIR).
    shutil.rmtree(os.path.join(os.path.dirname(job), "lib", "genlib", "__pycache__"), ignore_errors=True)
    runtime = run_dir + "-runtime"
    shutil.copytree(os.path.join(ROOT, "runner", "executor", "opverify_runtime"),
                    os.path.join(runtime, "opverify_runtime"), ignore=shutil.ignore_patterns("__pycache__"))
    env["OPVERIFY_RUNTIME_DIR"] = runtime
    command = [os.path.join(build, "runner", "opverify-batch"), job, "--backend", "cpu", "--run-dir", run_dir]
    started = time.monotonic()
    proc = subprocess.run(command, capture_output=True, text=True, timeout=3600, env=env)
    wall = time.monotonic() - started
    if proc.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, starts(run_dir), verdict_list.verdicts(run_dir)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--operators", type=int, default=12)
    parser.add_argument("--modules", type=int, default=400)
    parser.add_argument("--kib", type=int, default=8)
    parser.add_argument("--cases", type=int, default=4, help="cases per operator (1M-element tensors)")
    args = parser.parse_args()
    walls = {path: [] for path in PATHS}
    figures = {path: [] for path in PATHS}  # each run's executor_starts medians
    verdicts = {}
    with tempfile.TemporaryDirectory(prefix="opverify-preload-cost-") as folder:
        job = write_library_and_job(folder, args.modules, args.kib, args.operators, args.cases)
        for k in range(args.runs):
            for label in PATHS:  # in turn: the machine's load hits each alike
                wall, started, seen = one_run(args.build, job, os.path.join(folder, f"{label}{k}"), label)
                walls[label].append(wall)
                figures[label].append(started)
                verdicts.setdefault(label, seen)
                print(f"run {k + 1} {label:8s} {wall:7.2f} s  open_ms median {started['open_ms']:8.1f}  "
                      f"library import (ms, median) {started['preload_ms']:8.1f}  "
                      f"runtime import {started['runtime_ms']:6.1f}  cases {len(seen)}", flush=True)
    medians = {path: statistics.median(walls[path]) for path in PATHS}
    print(json.dumps({"operators": args.operators, "modules": args.modules, "kib": args.kib, "runs": args.runs,
                      "wall_s": {path: round(medians[path], 2) for path in PATHS},
                      "ratio_to_neither": {path: round(medians[path] / medians["neither"], 3) for path in PATHS},
                      "open_ms_median": {path: round(statistics.median(f["open_ms"] for f in figures[path]), 1)
                                         for path in PATHS},
                      "preload_ms_median": {path: round(statistics.median(f["preload_ms"] for f in figures[path]), 1)
                                            for path in PATHS},
                      "runtime_ms_median": {path: round(statistics.median(f["runtime_ms"] for f in figures[path]), 1)
                                            for path in PATHS},
                      "verdicts_identical": all(verdicts[path] == verdicts["neither"] for path in PATHS),
                      "cases": len(verdicts["neither"])}, indent=1))


if __name__ == "__main__":
    main()
