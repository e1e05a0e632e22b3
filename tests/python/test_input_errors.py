"""Bad input to the real programs ends in a clear error (exit 2, naming the
file and the field or flag) or in the right verdict; never an abort, a hang
or a protocol error. Each test is one input of issue 17 that used to crash,
hang or pass silently. tools/hostile_inputs.py tries hundreds more."""
import json
import os
import subprocess
import time

import numpy
import pytest

from test_batch import CPU_OPS, batch_bin, run_batch, write_manifest  # noqa: F401 - fixtures
from test_verify_cli import FIXTURES, run_verify

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def verify_result(opverify_bin, tmp_path, op):
    output = tmp_path / f"{op}.json"
    proc = run_verify(opverify_bin, op, FIXTURES, "--no-lint", "--output", str(output), timeout=120)
    assert output.exists(), proc.stderr[-2000:]
    return proc, json.loads(output.read_text())


# ---- hostile implementations and references -------------------------------------

def test_a_reference_returning_none_is_the_references_fault(opverify_bin, tmp_path):
    proc, result = verify_result(opverify_bin, tmp_path, "ref_none")
    assert proc.returncode == 1
    failure = result["failures"][0]
    assert failure["error_type"] == "ReferenceError", failure
    assert "the reference Model.forward returned NoneType" in failure["error_msg"]


def test_a_reference_that_cannot_run_on_its_inputs_is_the_tasks_fault(opverify_bin, tmp_path):
    proc, result = verify_result(opverify_bin, tmp_path, "ref_raises")
    assert proc.returncode == 1
    failure = result["failures"][0]
    assert failure["error_type"] == "ReferenceError", failure
    assert "reference Model failed on CPU and on cpu (the task's fault" in failure["error_msg"], failure
    assert "not implemented for 'Half'" in failure["error_msg"]


def test_a_zero_stride_output_far_larger_than_its_golden_is_refused_before_it_is_copied(opverify_bin, tmp_path):
    started = time.monotonic()
    proc, result = verify_result(opverify_bin, tmp_path, "expand_huge")
    elapsed = time.monotonic() - started
    assert proc.returncode == 1
    assert {f["error_type"] for f in result["failures"]} == {"ShapeMismatch"}
    assert "[536870912] (536870912 elements), the golden has 4 elements" in result["failures"][0]["error_msg"]
    assert elapsed < 30, f"took {elapsed:.0f} s: the view was materialised"


def test_a_lone_surrogate_in_an_error_is_carried_not_a_protocol_error(opverify_bin, tmp_path):
    proc, result = verify_result(opverify_bin, tmp_path, "surrogate_error")
    assert proc.returncode == 1
    failure = result["failures"][0]
    assert failure["error_type"] == "RuntimeError"
    assert "bad \ufffd text" in failure["error_msg"], failure["error_msg"]


# ---- files that are not files ------------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "folder"])
def test_compare_and_lint_refuse_what_is_not_a_regular_file(opverify_bin, tmp_path, kind):
    path = {"fifo": str(tmp_path / "t.npy"), "/dev/zero": "/dev/zero", "folder": str(tmp_path)}[kind]
    if kind == "fifo":
        os.mkfifo(path)
    good = tmp_path / "g.npy"
    numpy.save(good, numpy.zeros(3, numpy.float32))
    for argv in ([opverify_bin, "compare", "--golden", str(good), "--actual", path],
                 [opverify_bin, "compare", "--golden", path + ":/t", "--actual", str(good)],
                 [opverify_bin, "lint", path]):
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=30)  # used to wait forever
        assert proc.returncode == 2, (argv, proc.stdout, proc.stderr)
        assert path in proc.stdout + proc.stderr
        assert "not a regular file" in proc.stdout + proc.stderr


def test_verify_refuses_an_operator_name_longer_than_a_file_name(opverify_bin, tmp_path):
    proc = run_verify(opverify_bin, "a" * 300, FIXTURES)
    assert proc.returncode == 2, proc.stderr
    assert "operator name 'aaaa" in proc.stderr and "(300 characters)" in proc.stderr
    assert "terminate called" not in proc.stderr


# ---- opverify-batch's flags and run folder -------------------------------------------

@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "-1", "0", "1e400"])
def test_batch_refuses_a_timeout_that_is_not_a_positive_finite_number(batch_bin, tmp_path, value):
    manifest = write_manifest(tmp_path / "job.json", ["relu_ok"])
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--dry-run", "--timeout", value)
    assert proc.returncode == 2, proc.stdout
    assert "--timeout" in proc.stderr


def test_batch_refuses_a_previous_run_that_does_not_exist(batch_bin, tmp_path):
    manifest = write_manifest(tmp_path / "job.json", ["relu_ok"])
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--dry-run", "--previous", str(tmp_path / "nowhere"))
    assert proc.returncode == 2
    assert "--previous" in proc.stderr and "nowhere" in proc.stderr


def test_a_filter_matching_nothing_is_an_error_listing_names(batch_bin, tmp_path):
    manifest = write_manifest(tmp_path / "job.json", ["relu_ok", "quant_ok"])
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--dry-run", "--filter", "softmax*")
    assert proc.returncode == 2
    assert "--filter 'softmax*' matches none of the 2 operators" in proc.stderr
    assert "relu_ok, quant_ok" in proc.stderr


def test_a_sweep_over_its_cap_is_refused_fast_and_the_flag_raises_the_cap(batch_bin, tmp_path):
    manifest = tmp_path / "job.json"
    sweep = {k: list(range(20)) for k in "abcdef"}
    manifest.write_text(json.dumps({"name": "big", "defaults": {"impl_name": "cpu_impl", "lint": False},
                                    "operators": [{"name": "add_sweep", "dir": CPU_OPS, "sweep": sweep}]}))
    started = time.monotonic()
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--dry-run", timeout=60)
    assert proc.returncode == 2
    assert "64000000 cases, over the cap of 100000 per operator" in proc.stderr
    assert time.monotonic() - started < 10
    sweep = {"a": list(range(20)), "b": list(range(20))}  # 400 cases
    manifest.write_text(json.dumps({"name": "big", "defaults": {"impl_name": "cpu_impl", "max_cases": 100},
                                    "operators": [{"name": "add_sweep", "dir": CPU_OPS, "sweep": sweep}]}))
    assert run_batch(batch_bin, manifest, tmp_path / "run", "--dry-run").returncode == 2
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--dry-run", "--max-cases", "400")
    assert proc.returncode == 0, proc.stderr
    assert "400 sweep cases" in proc.stdout or "sweep cases" in proc.stdout


@pytest.mark.parametrize("where", ["file", "proc", "under_file"])
def test_a_run_folder_that_cannot_be_one_is_refused_naming_it(batch_bin, tmp_path, where):
    manifest = write_manifest(tmp_path / "job.json", ["relu_ok"])
    a_file = tmp_path / "a_file"
    a_file.write_text("x")
    run_dir = {"file": str(a_file), "proc": "/proc/opverify_run", "under_file": str(a_file / "run")}[where]
    proc = run_batch(batch_bin, manifest, run_dir, "--no-bench", timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert run_dir in proc.stderr
    assert "terminate called" not in proc.stderr


@pytest.mark.parametrize("where", ["operator", "defaults"])
def test_a_sweep_list_over_the_cap_is_refused_before_it_is_validated_or_expanded(batch_bin, tmp_path, where):
    manifest = tmp_path / "job.json"
    sweep = {"n": list(range(100001))}
    operator = {"name": "add_sweep", "dir": CPU_OPS}
    defaults = {"impl_name": "cpu_impl", "lint": False}
    (operator if where == "operator" else defaults)["sweep"] = sweep
    manifest.write_text(json.dumps({"name": "big", "defaults": defaults, "operators": [operator]}))
    started = time.monotonic()
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--dry-run", timeout=300)
    elapsed = time.monotonic() - started
    assert proc.returncode == 2, proc.stdout
    assert "100001 cases, over the cap of 100000 per operator" in proc.stderr, proc.stderr
    assert elapsed < 10, f"took {elapsed:.0f} s"  # used to take 100 s (the schema's uniqueItems)


def test_a_folder_or_file_name_that_is_not_utf8_is_named_readably_not_run_as_missing(batch_bin, tmp_path):
    root = bytes(tmp_path)
    folder = root + b"/ops\xff\xfe"
    os.makedirs(folder)
    for suffix in (b"_torch.py", b"_cpu_impl.py"):
        with open(os.path.join(CPU_OPS, "relu_ok" + suffix.decode()), "rb") as source:
            text = source.read()
        with open(folder + b"/relu_ok" + suffix, "wb") as out:  # a valid name in a folder that is not UTF-8
            out.write(text)
        with open(root + b"/named\xff" + suffix, "wb") as out:  # a name that is not UTF-8
            out.write(text)
    for pattern, said in (("ops*/*_torch.py", "is not valid UTF-8"), ("named*_torch.py", "is not a name")):
        manifest = tmp_path / "job.json"
        manifest.write_text(json.dumps({"name": "bytes", "defaults": {"impl_name": "cpu_impl", "lint": False},
                                        "operators": [{"glob": pattern}]}))
        # Every operator in such a folder used to fail as an ImportError "no such file" (its path
        # reached the executor with U+FFFD in it), and refusals printed the raw bytes.
        proc = subprocess.run([batch_bin, str(manifest), "--backend", "cpu", "--no-bench", "--run-dir",
                               str(tmp_path / "run")], capture_output=True, timeout=300)
        assert proc.returncode == 2, proc.stdout[-2000:]
        stderr = proc.stderr.decode("utf-8")  # raises on a raw byte
        assert said in stderr and "\ufffd" in stderr, stderr
        assert not (tmp_path / "run").exists()


def test_a_sweep_whose_task_file_does_not_import_fails_every_case_and_loses_none(batch_bin, tmp_path):
    # The load fails before any process has counted the cases: the sweep's count is known to the
    # rank, and every case fails with the import error (it used to be the first alone, the rest
    # "missing", and --resume ran them again forever).
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "broken_task_torch.py").write_text('import torch\nraise RuntimeError("planted: the task does not import")\n')
    (ops / "broken_task_cpu_impl.py").write_text(
        "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x\n")
    manifest = tmp_path / "job.json"
    manifest.write_text(json.dumps({"name": "broken", "defaults": {"impl_name": "cpu_impl", "lint": False},
                                    "operators": [{"name": "broken_task", "dir": str(ops),
                                                   "sweep": {"n": [1, 2, 3]}}]}))
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--no-ab")
    assert proc.returncode == 1, proc.stderr[-3000:]
    result = json.loads((tmp_path / "run" / "ops" / "broken_task" / "verify_result.json").read_text())
    assert [f["error_type"] for f in result["failures"]] == ["ImportError"] * 3, result["failures"]
    assert "planted: the task does not import" in result["failures"][2]["error_msg"]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert not summary["incomplete"] and not summary["problems"], (summary["incomplete"], summary["problems"])
