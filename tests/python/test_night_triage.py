"""The morning after a night, for real (mpirun -np 2 on the cpu backend):
--maxfail/-x stop a run of failing operators cleanly (the coordinator counts
the failures of every rank), the reports cover what ran and list the rest as
not run. Operators are generated into a temporary folder."""
import json
import os

import pytest

from test_batch import MPI_ENV, batch_bin, run_batch  # noqa: F401

FAST = ["--no-ab", "--no-bench"]

TASK = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2


def get_init_inputs():
    return []


def get_inputs(n=8):
    return [torch.linspace(1, 2, n)]
"""
IMPLS = {
    "ok": "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * 2\n",
    "off": "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x * 2.02\n",
    "raises": ("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
               "        raise ValueError('no kernel for n=%d' % x.numel())\n"),
}


def make_night(folder, kinds, cases=5, name="night"):
    """A manifest of operators `<kind>_NNNN`, one per entry of `kinds`, each a sweep of `cases` sizes."""
    ops = folder / "ops"
    ops.mkdir(exist_ok=True)
    names = []
    for i, kind in enumerate(kinds):
        op = f"{kind}_{i:04d}"
        (ops / f"{op}_torch.py").write_text(TASK)
        (ops / f"{op}_cpu_impl.py").write_text(IMPLS[kind])
        names.append(op)
    manifest = folder / f"{name}.json"
    manifest.write_text(json.dumps({
        "name": name,
        "defaults": {"impl_name": "cpu_impl", "lint": False, "sweep": {"n": [8 + k for k in range(cases)]}},
        "operators": [{"name": op, "dir": str(ops)} for op in names]}))
    return manifest, names


ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def summary_of(run_dir):
    """summary.json, checked against its schema where jsonschema is installed."""
    summary = json.loads((run_dir / "summary.json").read_text())
    try:
        import jsonschema
    except ImportError:
        return summary
    with open(os.path.join(ROOT, "schemas", "summary.schema.json")) as f:
        jsonschema.validate(summary, json.load(f))
    return summary


@pytest.mark.parametrize("ranks", [None, 2])
def test_exitfirst_stops_after_the_first_failed_case(batch_bin, tmp_path, ranks):
    manifest, names = make_night(tmp_path, ["raises"] * 6)
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "-x", *FAST, ranks=ranks)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = summary_of(run_dir)
    assert summary["stopped_by_maxfail"] == {"max_failures": 1}
    failed = summary["totals"]["failed"]
    # One rank: exactly the first failure; two: the other rank's case in hand may finish too.
    assert failed == 1 if ranks is None else 1 <= failed <= 2
    # Every case of the manifest is either stored or listed as not run, none twice.
    not_run = [entry["case_id"] for entry in summary["not_run"]]
    stored = [f["case_id"] for f in summary["failures"]]
    assert len(set(not_run) | set(stored)) == len(not_run) + len(stored) == 6 * 5
    assert all("--maxfail 1" in entry["reason"] for entry in summary["not_run"])
    # The console: the FAILED lines, a NOT RUN line per case not run (capped), the reason on the last line.
    out_lines = proc.stdout.splitlines()
    assert sum(line.startswith("FAILED ") for line in out_lines) == failed
    assert sum(line.startswith("NOT RUN ") for line in out_lines) == len(not_run)
    assert "stopped after --maxfail 1" in out_lines[-1] and "--resume" in out_lines[-1]
    assert summary["unassigned_items"] >= 6 - (ranks or 1)
    report = (run_dir / "report.md").read_text()
    assert "## Stopped early" in report and "--maxfail 1" in report
    import xml.etree.ElementTree as ET
    junit = ET.parse(run_dir / "junit.xml").getroot()
    assert junit.get("skipped") == str(len(not_run))


def test_maxfail_counts_failures_across_ranks_and_resume_finishes(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["ok", "raises", "off", "raises", "ok", "off", "raises", "ok"])
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "--maxfail", "7", *FAST, ranks=2)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = summary_of(run_dir)
    failed = summary["totals"]["failed"]
    assert 7 <= failed <= 8, summary["totals"]  # 7, and perhaps the other rank's case in hand
    assert summary["stopped_by_maxfail"] == {"max_failures": 7}
    assert summary["totals"]["cases"] + len(summary["not_run"]) == 8 * 5
    assert "stopped after --maxfail 7" in proc.stdout.splitlines()[-1]
    # --resume runs what was not run, with no limit: every failing case fails, no case twice.
    resumed = run_batch(batch_bin, manifest, run_dir, "--resume", *FAST, ranks=2)
    assert resumed.returncode == 1, resumed.stderr[-3000:]
    summary = summary_of(run_dir)
    assert summary["totals"]["cases"] == 40 and summary["totals"]["failed"] == 25
    assert summary["not_run"] == [] and "stopped_by_maxfail" not in summary


def test_maxfail_never_reached_runs_everything_and_usage_errors(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["ok", "raises"], cases=2)
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "--maxfail", "3", *FAST)
    assert proc.returncode == 1
    summary = summary_of(run_dir)
    assert summary["totals"]["cases"] == 4 and "stopped_by_maxfail" not in summary
    assert summary["not_run"] == [] and "NOT RUN" not in proc.stdout
    for flags in (["--maxfail", "0"], ["-x", "--maxfail", "2"]):
        bad = run_batch(batch_bin, manifest, tmp_path / "bad", *flags)
        assert bad.returncode == 2, flags
        assert not (tmp_path / "bad").exists()
