#!/usr/bin/env python3
"""The batch runner's own cost per case, against the seed's way of working
(one Python process per operator that imports torch, runs its cases and
compares), measured in the same run on the same cores (cpu backend).

  /usr/bin/python3 perf/runner_overhead.py [--operators 100] [--cases 20] [--build build]

Writes N tiny operators (x * 2 + 1 on 64 elements, C swept sizes each) into
a temporary folder, then times:
  opverify-batch with 1 rank, and with 2 ranks (mpirun), on all N x C cases;
  the seed-style loop: for each operator, `python3 seed_style_verify.py`.
The runner's overhead per case is what a case costs beyond the operator's
own work (constructing the models, golden and implementation forwards),
as a median over cases and as the whole run's rank-seconds spread over them.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import h5py

TASK = '''import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2 + 1


def get_init_inputs():
    return []


def get_inputs(n=64):
    return [torch.randn(n)]
'''
IMPL = '''import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return torch.add(torch.mul(x, 2), 1)
'''
# What the seed's verify.py does for one operator, reduced to its work: a
# fresh interpreter, torch imported, both models built, every case run and
# compared.
SEED_STYLE = '''import importlib.util, sys, torch
def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
task, impl = load(sys.argv[1], "task"), load(sys.argv[2], "impl")
ok = 0
for n in [int(v) for v in sys.argv[3].split(",")]:
    torch.manual_seed(0)
    x = task.get_inputs(n=n)
    golden = task.Model()(*[t.clone() for t in x])
    actual = impl.ModelNew()(*[t.clone() for t in x])
    ok += bool(torch.allclose(golden, actual, rtol=2**-10, atol=2**-16))
print(ok)
'''


def make_operators(folder, operators, cases):
    sizes = [64 + i for i in range(cases)]
    for i in range(operators):
        with open(os.path.join(folder, f"tiny{i:03d}_torch.py"), "w") as f:
            f.write(TASK)
        with open(os.path.join(folder, f"tiny{i:03d}_cpu_impl.py"), "w") as f:
            f.write(IMPL)
    manifest = {"name": "overhead", "defaults": {"impl_name": "cpu_impl", "lint": False, "sweep": {"n": sizes}},
                "operators": [{"glob": "*_torch.py"}]}
    path = os.path.join(folder, "overhead.json")
    with open(path, "w") as f:
        json.dump(manifest, f)
    return path, sizes


def run_batch(build, manifest, run_dir, ranks):
    command = [os.path.join(build, "runner", "opverify-batch"), manifest, "--backend", "cpu", "--run-dir", run_dir,
               "--no-ab", "--no-bench", "--store", "none"]
    if ranks > 1:
        command = ["mpirun", "-np", str(ranks), "--oversubscribe", *command]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    started = time.perf_counter()
    proc = subprocess.run(command, capture_output=True, text=True, env=env)
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"opverify-batch failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    per_case = []
    with h5py.File(os.path.join(run_dir, "results.h5"), "r") as f:
        table = f["cases"][:]
    for row in table:
        if row["case_index"] < 0:
            continue
        work = row["construct_ms"] + row["golden_ms"] + row["impl_ms"]
        per_case.append(row["wall_ms"] - work)
    work_total_s = sum(row["construct_ms"] + row["golden_ms"] + row["impl_ms"] for row in table if row["case_index"] >= 0) / 1e3
    cases = len(per_case)
    return {"wall_s": wall, "cases": cases, "median_case_overhead_ms": statistics.median(per_case),
            "amortised_overhead_ms": (wall * ranks - work_total_s) / cases * 1e3}


def run_seed_style(folder, operators, sizes, parallel):
    script = os.path.join(folder, "seed_style_verify.py")
    with open(script, "w") as f:
        f.write(SEED_STYLE)
    sizes_arg = ",".join(str(n) for n in sizes)
    started = time.perf_counter()
    pending = []
    for i in range(operators):
        args = [sys.executable, script, os.path.join(folder, f"tiny{i:03d}_torch.py"),
                os.path.join(folder, f"tiny{i:03d}_cpu_impl.py"), sizes_arg]
        pending.append(subprocess.Popen(args, stdout=subprocess.PIPE, text=True))
        if len(pending) >= parallel:
            pending.pop(0).communicate()
    for p in pending:
        p.communicate()
    return time.perf_counter() - started


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--operators", type=int, default=100)
    parser.add_argument("--cases", type=int, default=20)
    parser.add_argument("--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        manifest, sizes = make_operators(folder, args.operators, args.cases)
        total = args.operators * args.cases
        print(f"{args.operators} operators x {args.cases} cases = {total} cases, cpu backend, {os.cpu_count()} cores")
        results = {}
        for ranks in (1, 2):
            results[ranks] = run_batch(args.build, manifest, os.path.join(folder, f"run{ranks}"), ranks)
            r = results[ranks]
            print(f"opverify-batch {ranks} rank(s): {r['wall_s']:.1f} s, runner overhead per case: median "
                  f"{r['median_case_overhead_ms']:.2f} ms, amortised {r['amortised_overhead_ms']:.2f} ms")
        for parallel in (1, 2):
            seed = run_seed_style(folder, args.operators, sizes, parallel)
            ours = results[parallel]["wall_s"]
            print(f"seed-style, one process per operator, {parallel} at a time: {seed:.1f} s "
                  f"-> opverify-batch ({parallel} rank(s)) is {seed / ours:.1f}x faster")


if __name__ == "__main__":
    main()
