"""Implementations that forge their own verdict from inside their executor's process
(tests/fixtures/forgers, found by a red-team pass on the cpu backend; each passed while wrong
before these checks): what the task says of its cases (how many, which apply) is the
reference's to say, the inputs' bytes after ModelNew.forward are compared outside the
implementation's process, the outputs must be plain tensors, and torch.Tensor's methods the
runtime reads them with are sealed. Through the real `opverify verify` and `opverify-batch`."""
import json
import os
import subprocess

import pytest

from test_trust import BUILD, ROOT, env  # noqa: F401 (env: test_trust's fixture, a home of the test's own)

FORGERS = os.path.join(ROOT, "tests", "fixtures", "forgers")
CPU_OPS = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")
OPS = sorted(name[:-len("_cpu_impl.py")] for name in os.listdir(FORGERS)
             if name.endswith("_cpu_impl.py") and name != "forge_framework_clock_cpu_impl.py")


def expected(op):
    line = next(text for text in open(os.path.join(FORGERS, f"{op}_torch.py")).read().splitlines()
                if text.startswith("EXPECTED_ERROR_TYPE"))
    return line.split("=", 1)[1].strip().strip('"')


@pytest.mark.parametrize("op", OPS)
def test_each_forger_fails_every_case_with_its_type(opverify_bin, env, tmp_path, op):
    output = tmp_path / f"{op}.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", op, "--verify_dir", FORGERS,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--timeout", "60",
                           "--output", str(output)], capture_output=True, text=True, timeout=300, env=env)
    assert output.exists(), f"exit {proc.returncode}: {proc.stderr[-3000:]}"
    result = json.loads(output.read_text())
    assert proc.returncode == 1 and result["passed_cases"] == 0, result["failures"]
    assert result["total_cases"] == (4 if op == "forge_case_count" else 1)
    assert {f["error_type"] for f in result["failures"]} == {expected(op)}, result["failures"]


def test_forgers_in_a_batch_fail_and_the_honest_operator_after_them_passes(env, tmp_path):
    manifest = tmp_path / "forgers.json"
    operators = [{"name": op, "dir": FORGERS} for op in OPS] + [{"name": "relu_ok", "dir": CPU_OPS}]
    manifest.write_text(json.dumps({"name": "forgers", "defaults": {"impl_name": "cpu_impl", "lint": False,
                                                                    "timeout_s": 60}, "operators": operators}))
    run_dir = tmp_path / "run"
    proc = subprocess.run([os.path.join(BUILD, "runner", "opverify-batch"), str(manifest), "--run-dir", str(run_dir),
                           "--backend", "cpu", "--no-bench", "--no-ab", "--schedule", "fifo"],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    by_name = {op["name"]: op for op in summary["operators"]}
    assert by_name["relu_ok"]["passed"] == by_name["relu_ok"]["cases"] == 4
    for op in OPS:
        assert by_name[op]["passed"] == 0 and set(by_name[op]["error_types"]) == {expected(op)}, by_name[op]
    assert summary["totals"]["passed"] == 4


def test_processes_an_implementation_leaves_running_cannot_slow_the_frameworks_clock(env, tmp_path):
    """forge_framework_clock's burners run while the framework is timed (in the reference's
    executor) and stop while its own forward runs: a speedup of about 5 on this machine's two
    cores before the runner stopped the implementation's executor and what it left running
    while the framework is timed. It computes with torch what torch computes: about 1 now."""
    manifest = tmp_path / "clock.json"
    manifest.write_text(json.dumps({"name": "clock", "defaults": {"impl_name": "cpu_impl", "lint": False,
                                                                  "timeout_s": 120, "bench": {"enabled": True,
                                                                                              "repeats": 30}},
                                    "operators": [{"name": "forge_framework_clock", "dir": FORGERS}]}))
    run_dir = tmp_path / "run"
    proc = subprocess.run([os.path.join(BUILD, "runner", "opverify-batch"), str(manifest), "--run-dir", str(run_dir),
                           "--backend", "cpu", "--no-ab"], capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    perf = json.loads((run_dir / "ops" / "forge_framework_clock" / "perf_result.json").read_text())
    assert perf["passed_cases"] == 1
    assert perf["speedup_vs_torch"] < 2.0, (perf["framework"], perf["implementation"])
