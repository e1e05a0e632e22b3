"""A night of failing operators on the cpu backend: how many A/B re-runs a
run spends and how long they take (docs/PERFORMANCE.md, issue 26).

    /usr/bin/python3 perf/night_ab.py --operators 100 --cases 5 --ranks 2 [-- FLAGS...]

Generates OPERATORS operators whose implementation is 1% off (every case an
AccuracyError of one kind), each a sweep of CASES sizes, runs opverify-batch
on them and prints the A/B count and time from summary.json. make_night is
also the fixture of tests/python/test_night_triage.py."""
import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}

TASK = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2


def get_init_inputs():
    return []


def get_inputs(n=8, dtype="float32"):
    return [torch.linspace(1, 2, n, dtype=getattr(torch, dtype))]
"""
IMPLS = {
    "ok": "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n",
    "off": "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * 2.02\n",
    "raises": ("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
               "        raise ValueError('no kernel for n=%d' % x.numel())\n"),
}


def make_night(folder, kinds, cases=5, name="night", dtypes=None):
    """A manifest of operators `<kind>_NNNN`, one per entry of `kinds` (a key
    of IMPLS), each a sweep of `cases` sizes (times `dtypes` where given).
    Returns the manifest's path and the operators' names."""
    ops = os.path.join(str(folder), "ops")
    os.makedirs(ops, exist_ok=True)
    names = []
    for i, kind in enumerate(kinds):
        op = f"{kind}_{i:04d}"
        with open(os.path.join(ops, f"{op}_torch.py"), "w") as f:
            f.write(TASK)
        with open(os.path.join(ops, f"{op}_cpu_impl.py"), "w") as f:
            f.write(IMPLS[kind])
        names.append(op)
    sweep = {"n": [8 + k for k in range(cases)]}
    if dtypes:
        sweep["dtype"] = list(dtypes)
    manifest = os.path.join(str(folder), f"{name}.json")
    with open(manifest, "w") as f:
        json.dump({"name": name, "defaults": {"impl_name": "cpu_impl", "lint": False},
                   "operators": [{"name": op, "dir": ops, "sweep": sweep} for op in names]}, f)
    return manifest, names


def unexpected_ab(run_dir):
    """What each A/B that did not find the planted real defect saw (every operator here is
    deterministically 1% off): junit.xml's account of its attempts, one operator each."""
    import xml.etree.ElementTree as ET
    lines, seen = [], set()
    for case in ET.parse(os.path.join(run_dir, "junit.xml")).iter("testcase"):
        failure = case.find("failure")
        if failure is None:
            failure = case.find("error")
        message = failure.get("message", "") if failure is not None else ""
        if "[A/B: " not in message or "[A/B: real_defect]" in message or "[A/B: skipped" in message:
            continue
        op = case.get("name", "").split("/")[0]
        if op in seen:
            continue
        seen.add(op)
        out = case.findtext("system-out") or ""
        lines.append(f"{case.get('name')}: {message[:200]}\n    " + "\n    ".join(out.splitlines()[:8]))
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--operators", type=int, default=100)
    parser.add_argument("--cases", type=int, default=5)
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--build", default=os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build")))
    parser.add_argument("--keep", metavar="DIR", help="make the night in DIR (kept) instead of a temporary folder")
    parser.add_argument("flags", nargs="*", help="more opverify-batch flags (after --)")
    args = parser.parse_args()
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
    with (contextlib.nullcontext(args.keep) if args.keep else tempfile.TemporaryDirectory()) as folder:
        manifest, _ = make_night(folder, ["off"] * args.operators, args.cases)
        run_dir = os.path.join(folder, "run")
        command = [os.path.join(args.build, "runner", "opverify-batch"), manifest, "--backend", "cpu",
                   "--run-dir", run_dir, "--no-bench", "--progress", "none", *args.flags]
        if args.ranks > 1:
            command = ["mpirun", "-np", str(args.ranks), "--oversubscribe", *command]
        started = time.monotonic()
        proc = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ, **MPI_ENV))
        wall_s = time.monotonic() - started
        with open(os.path.join(run_dir, "summary.json")) as f:
            summary = json.load(f)
        odd = unexpected_ab(run_dir)
    failures = summary["failures"]
    own = [f for f in failures if f.get("ab") not in (None, "skipped (budget)") and "ab_inherited_from" not in f]
    inherited = [f for f in failures if "ab_inherited_from" in f]
    skipped = [f for f in failures if f.get("ab") == "skipped (budget)"]
    timing = summary.get("timing", {})
    print(f"{args.operators} operators x {args.cases} cases, {args.ranks} ranks, flags {args.flags}: "
          f"exit {proc.returncode}, wall {wall_s:.1f} s")
    operators = len({f["op"] for f in failures})
    most = max((sum(1 for f in own if f["op"] == op) for op in {f["op"] for f in own}), default=0)
    print(f"  {len(failures)} accuracy failures in {operators} operators: {len(own)} A/B re-runs "
          f"(at most {most} per operator), {len(inherited)} inherited, {len(skipped)} skipped (budget)"
          + (f"; stopped by {summary['stopped_by_signal']}" if "stopped_by_signal" in summary else "")
          + ("; stopped by --time-limit" if "stopped_by_time_limit" in summary else ""))
    print(f"  A/B {timing.get('ab_s', 0):.1f} s of {timing.get('item_s', 0):.1f} s in items "
          f"(summed over ranks); classes {summary.get('ab')}")
    for line in odd:
        print("  " + line)
    return 0 if proc.returncode == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
