"""opverify-batch --list and --dry-run run no user code: a task's own cases are counted from its
source (a literal CASES list) or listed as `op/#*`, known when it runs; --filter and
--rerun-failed still pick `op/#N` ids at run time. Task and implementation files here write a
marker file and exit the moment they are imported, so any import shows. The timing test lists
200 library operators (each importing a library that takes 50 ms to import) and reports the
time per operator."""
import json
import os
import subprocess
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
BATCH = os.path.join(BUILD, "runner", "opverify-batch")

# Imported: leaves a marker and kills the process (an executor dies; a listing that imported it fails).
TRAP = ("import os as _os\nwith open({marker!r}, 'a') as _f:\n    _f.write(__name__ + '\\n')\n"
        "_os._exit(3)\n")
TASK = """import torch

CASES = {cases}


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2.0


def get_init_inputs():
    return []


def get_inputs(n=8):
    return [torch.randn(n)]


def get_input_groups():
    return [get_inputs(**p) for p in CASES]
"""
IMPL = """import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        return x * 2.0
"""


def write_op(folder, name, cases, marker=None, impl_name="cpu_impl"):
    trap = TRAP.format(marker=str(marker)) if marker else ""
    (folder / f"{name}_torch.py").write_text(trap + TASK.format(cases=cases))
    (folder / f"{name}_{impl_name}.py").write_text(trap + IMPL)


def batch(manifest, *flags, timeout=300):
    return subprocess.run([BATCH, str(manifest), "--backend", "cpu", "--no-ab", *map(str, flags)],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def trapped(tmp_path):
    """A job whose every task and implementation file leaves a marker when imported."""
    marker = tmp_path / "imported"
    ops = tmp_path / "ops"
    ops.mkdir()
    write_op(ops, "literal", "[dict(n=1), dict(n=2), dict(n=3)]", marker)
    write_op(ops, "computed", "[dict(n=n) for n in range(1, 9) if n % 3]", marker)  # an `if`: not certain
    write_op(ops, "edges", "[dict(n=4)]", marker)
    write_op(ops, "swept", "[dict(n=4)]", marker)
    manifest = tmp_path / "job.json"
    manifest.write_text(json.dumps({"name": "trapped", "defaults": {"impl_name": "cpu_impl", "lint": False},
                                    "operators": [{"name": "literal", "dir": "ops"},
                                                  {"name": "computed", "dir": "ops"},
                                                  {"name": "edges", "dir": "ops", "edge_cases": True},
                                                  {"name": "swept", "dir": "ops", "sweep": {"n": [5, 6]}}]}))
    return manifest, marker


def test_list_imports_nothing_and_marks_what_is_known_at_run_time(trapped):
    manifest, marker = trapped
    proc = batch(manifest, "--list")
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), marker.read_text()
    assert proc.stdout.split() == ["literal/#1", "literal/#2", "literal/#3", "computed/#*", "edges/#1",
                                   "edges/edge/*", 'swept/{"n":5}', 'swept/{"n":6}']
    assert "computed: its own cases are counted when it runs (get_input_groups() does not return a literal " \
           "list" in proc.stderr
    assert "edges: its generated edge cases are made when it runs" in proc.stderr
    assert "6 cases, and those of 2 operators known when they run (lines ending in *)" in proc.stderr
    filtered = batch(manifest, "--list", "--filter", "literal/#2", "--filter", "computed")
    assert filtered.stdout.split() == ["literal/#2", "computed/#*"]
    dtyped = batch(manifest, "--list", "--dtype", "float32", "--filter", "literal")
    assert dtyped.stdout.split() == ["literal/#*"]  # the inputs' dtype decides, when it runs
    assert "literal: --dtype is decided by its inputs' dtypes when it runs" in dtyped.stderr
    assert not marker.exists()


def test_dry_run_imports_nothing_and_counts_from_the_source(trapped, tmp_path):
    manifest, marker = trapped
    proc = batch(manifest, "--dry-run", "--run-dir", tmp_path / "run")
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists(), marker.read_text()
    assert "literal (its own cases: 3)" in proc.stdout
    assert "computed (its own cases, counted when it runs: get_input_groups() does not return" in proc.stdout
    assert "edges (its own cases: 1, then its generated edge cases)" in proc.stdout
    assert "swept (2 sweep cases)" in proc.stdout


def test_filter_and_rerun_failed_pick_own_case_ids_at_run_time(tmp_path):
    ops = tmp_path / "ops"
    ops.mkdir()
    write_op(ops, "computed", "[dict(n=n) for n in range(1, 9) if n % 3]")  # 6 cases, not countable
    manifest = tmp_path / "job.json"
    manifest.write_text(json.dumps({"name": "computed", "defaults": {"impl_name": "cpu_impl", "lint": False,
                                                                     "seeds": 1, "bench": {"enabled": False}},
                                    "operators": [{"name": "computed", "dir": "ops"}]}))
    assert batch(manifest, "--list", "--filter", "computed/#2").stdout.split() == ["computed/#*"]
    proc = batch(manifest, "--filter", "computed/#2", "--run-dir", tmp_path / "run")
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["totals"]["cases"] == 1 and summary["totals"]["passed"] == 1
    # A rerun of failed ids lists them by name, though the count is known only when it runs.
    (ops / "computed_cpu_impl.py").write_text(IMPL.replace("2.0", "2.5"))
    failing = batch(manifest, "--filter", "computed/#[35]", "--run-dir", tmp_path / "bad")
    assert failing.returncode == 1
    rerun = batch(manifest, "--list", "--rerun-failed", tmp_path / "bad")
    assert rerun.returncode == 0 and sorted(rerun.stdout.split()) == ["computed/#3", "computed/#5"]


def test_listing_200_library_operators_takes_well_under_a_second_each(tmp_path):
    """Each implementation imports a library whose import takes 50 ms and leaves a marker: a
    listing that imported them would take over 10 s and leave the marker."""
    marker = tmp_path / "imported"
    lib = tmp_path / "vendor" / "slowlib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(TRAP.format(marker=str(marker)).replace("_os._exit(3)", "import time\n"
                                                                           "time.sleep(0.05)"))
    ops = tmp_path / "ops"
    ops.mkdir()
    operators = []
    for i in range(200):
        cases = "[" + ", ".join(f"dict(n={n})" for n in range(1, 2 + i % 5)) + "]"
        write_op(ops, f"op{i:03d}", cases, impl_name="triton_impl")
        (ops / f"op{i:03d}_triton_impl.py").write_text("from slowlib import scale\n" + IMPL)
        operators.append({"name": f"op{i:03d}", "dir": "ops"})
    manifest = tmp_path / "library.json"
    manifest.write_text(json.dumps({"name": "library200", "defaults": {
        "impl_name": "triton_impl", "library": ["slowlib"], "python_path": ["vendor"]}, "operators": operators}))
    started = time.perf_counter()
    proc = batch(manifest, "--list")
    elapsed = time.perf_counter() - started
    assert proc.returncode == 0, proc.stderr
    assert not marker.exists()
    assert len(proc.stdout.split()) == sum(1 + i % 5 for i in range(200)) == 600
    per_operator = elapsed / 200
    print(f"--list of 200 library operators: {elapsed:.3f} s, {per_operator * 1e3:.2f} ms per operator")
    assert per_operator < 0.05, f"{elapsed:.2f} s for 200 operators"
