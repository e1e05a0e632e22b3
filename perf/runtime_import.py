#!/usr/bin/env python3
"""What compiling opverify's own runtime to bytecode saves each executor (docs/PERFORMANCE.md,
"The library's bytecode"): a fresh copy of runner/executor/opverify_runtime (as a device receives
it, with no __pycache__), and the import an executor makes of it (opverify_runtime.executor, the
lint, the provenance recorder; torch imported first, as the executor does) timed in a new
interpreter each time, from source and from bytecode in turn, --runs times each. Executors see the
runtime read-only, so without the batch's bytecode step they compile it at every start.

  /usr/bin/python3 perf/runtime_import.py [--runs 9] [--python /usr/bin/python3]
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
PROBE = """
import sys, time
sys.path.insert(0, sys.argv[1])
import torch  # noqa: F401 - the executor has it imported before its runtime's modules
started = time.perf_counter()
import opverify_runtime.executor, opverify_runtime.lint, opverify_runtime.provenance  # noqa: E401,F401
print((time.perf_counter() - started) * 1e3)
"""


def import_ms(python, folder):
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")  # as in the sandbox: nothing written back
    proc = subprocess.run([python, "-c", PROBE, folder], capture_output=True, text=True, env=env, timeout=300)
    if proc.returncode != 0:
        sys.exit(proc.stderr[-2000:])
    return float(proc.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--python", default=sys.executable)
    args = parser.parse_args()
    times = {"source": [], "bytecode": []}
    with tempfile.TemporaryDirectory(prefix="opverify-runtime-import-") as folder:
        source, compiled = os.path.join(folder, "source"), os.path.join(folder, "bytecode")
        for copy in (source, compiled):
            shutil.copytree(os.path.join(ROOT, "runner", "executor", "opverify_runtime"),
                            os.path.join(copy, "opverify_runtime"), ignore=shutil.ignore_patterns("__pycache__"))
        subprocess.run([args.python, "-m", "compileall", "-q", os.path.join(compiled, "opverify_runtime")], check=True)
        for _ in range(args.runs):  # in turn: the machine's load hits both alike
            times["source"].append(import_ms(args.python, source))
            times["bytecode"].append(import_ms(args.python, compiled))
    medians = {k: statistics.median(v) for k, v in times.items()}
    print(json.dumps({"runs": args.runs, "import_ms_median": {k: round(v, 1) for k, v in medians.items()},
                      "saved_ms_per_executor": round(medians["source"] - medians["bytecode"], 1),
                      "ratio": round(medians["bytecode"] / medians["source"], 3)}, indent=1))


if __name__ == "__main__":
    main()
