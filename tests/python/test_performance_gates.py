"""Performance failures CI sees, for real (mpirun -np 2 on the cpu backend,
issue 26 item 5): a performance reference missed is a PerformanceError in
junit.xml and summary.json (and opverify-batch's exit code), and an operator
slower than the baseline beyond its noise floor is a PerformanceRegression
there; an unchanged one is not. The operators' time is a sleep, so that the
CPU's own noise stays far below the change."""
import json
import os
import subprocess
import xml.etree.ElementTree as ET

from test_batch import batch_bin, run_batch  # noqa: F401
from test_night_triage import summary_of

BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
REDUCE = os.path.join(BUILD, "reduce", "opverify-reduce")

TASK = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2


def get_init_inputs():
    return []


def get_inputs(n=8):
    return [torch.linspace(1, 2, n)]
"""
IMPL = """import time

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        time.sleep({delay_s})
        return x * 2
"""


def write_night(folder, delays):
    """A manifest of operators sleeping delays[name] seconds per call, benchmarked with 5 repeats."""
    ops = folder / "ops"
    ops.mkdir(parents=True, exist_ok=True)
    for name, delay in delays.items():
        (ops / f"{name}_torch.py").write_text(TASK)
        (ops / f"{name}_cpu_impl.py").write_text(IMPL.format(delay_s=delay))
    manifest = folder / "perf.json"
    manifest.write_text(json.dumps({
        "name": "perf", "defaults": {"impl_name": "cpu_impl", "lint": False, "bench": {"warmup": 1, "repeats": 5}},
        "operators": [{"name": name, "dir": str(ops), "sweep": {"n": [8, 16]}} for name in delays]}))
    return manifest


def gates_in_junit(run_dir):
    """(classname, name) -> failure type ("" when it passed, "skipped"), from junit.xml's performance suite."""
    root = ET.parse(run_dir / "junit.xml").getroot()
    suites = [s for s in root.iter("testsuite") if s.get("name") == "opverify.performance"]
    assert len(suites) == 1, [s.get("name") for s in root.iter("testsuite")]
    out = {}
    for case in suites[0].iter("testcase"):
        failure = case.find("failure")
        out[(case.get("classname"), case.get("name"))] = (
            failure.get("type") if failure is not None else "skipped" if case.find("skipped") is not None else "")
    return root, suites[0], out


def test_references_and_slow_downs_are_failures_ci_sees(batch_bin, tmp_path):
    baseline = tmp_path / "baseline"
    manifest = write_night(tmp_path / "one", {"slow_op": 0.002, "steady_op": 0.03})
    proc = run_batch(batch_bin, manifest, baseline, ranks=2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # Tonight slow_op sleeps 20 times as long; steady_op is unchanged.
    manifest = write_night(tmp_path / "two", {"slow_op": 0.04, "steady_op": 0.03})
    references = tmp_path / "references.json"
    references.write_text(json.dumps({"*": {
        "slow_op": {"latency_ms": 2.0, "upper": 0.5},      # 40 ms is far above 3 ms: a PerformanceError
        "steady_op": {"latency_ms": 30.0, "lower": -0.5, "upper": 1.0},
        "gone_op": {"latency_ms": 1.0}}}))                 # not in the run: skipped
    tonight = tmp_path / "tonight"
    proc = run_batch(batch_bin, manifest, tonight, "--references", str(references), ranks=2)
    # Every case passed: the reference alone fails the night.
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "PerformanceError: slow_op (geometric mean over its shapes)" in proc.stdout
    summary = summary_of(tonight)
    assert summary["totals"]["failed"] == 0
    gates = summary["performance_gates"]
    assert [g["op"] for g in gates["reference_violations"]] == ["slow_op"]
    assert gates["regressions"] == [] and gates["failed"] == 1
    root, suite, junit = gates_in_junit(tonight)
    assert junit[("slow_op", "reference slow_op")] == "PerformanceError"
    assert junit[("steady_op", "reference steady_op")] == ""
    assert junit[("gone_op", "reference gone_op")] == "skipped"
    assert root.get("failures") == "1" and suite.get("failures") == "1" and suite.get("skipped") == "1"
    # Against the baseline: slow_op is a PerformanceRegression, steady_op within its noise floor.
    proc = subprocess.run([REDUCE, str(tonight), "--baseline", str(baseline), "--references", str(references)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "slower: slow_op +" in proc.stdout and "noise floor" in proc.stdout
    assert "steady_op" not in [line.split()[1] for line in proc.stdout.splitlines() if line.startswith("slower:")]
    summary = summary_of(tonight)
    gates = summary["performance_gates"]
    assert [g["op"] for g in gates["regressions"]] == ["slow_op"]
    assert gates["regressions"][0]["error_type"] == "PerformanceRegression"
    assert "noise floor" in gates["regressions"][0]["message"] and "at 5 repeats" in gates["regressions"][0]["message"]
    assert gates["failed"] == 2
    diff = json.loads((tonight / "baseline_diff.json").read_text())
    slower = {c["op"]: c for c in diff["slower"]}
    assert set(slower) == {"slow_op"} and slower["slow_op"]["repeats"] == 5
    assert slower["slow_op"]["latency_ratio"] > 1 + slower["slow_op"]["noise_floor"]
    _, suite, junit = gates_in_junit(tonight)
    assert junit[("slow_op", "baseline")] == "PerformanceRegression"
    assert ("steady_op", "baseline") not in junit
    assert suite.get("failures") == "2"
    report = (tonight / "report.md").read_text()
    assert "- slower (1): `slow_op` +" in report and "noise floor" in report
