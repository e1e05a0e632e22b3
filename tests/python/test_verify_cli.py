"""`opverify verify` on the CPU fixtures (tests/fixtures/cpu_ops): real
executor processes running real torch operators, crashing, hanging and
failing in each known way, with verify_result.json read back."""
import json
import os
import shutil
import subprocess
import time

import pytest

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "cpu_ops")


@pytest.fixture
def verify(opverify_bin, tmp_path):
    """verify(op, *flags) -> (exit code, verify_result.json as dict, stderr)."""
    def run(op, *flags, timeout=120):
        output = tmp_path / f"{op}.json"
        proc = subprocess.run([opverify_bin, "verify", "--op_name", op, "--verify_dir", FIXTURES,
                               "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint",
                               "--output", str(output), *flags],
                              capture_output=True, text=True, timeout=timeout)
        result = json.loads(output.read_text()) if output.exists() else None
        return proc.returncode, result, proc.stderr
    return run


def test_passing_operator_writes_the_seed_format(verify):
    code, r, err = verify("relu_ok")
    assert code == 0, err
    assert list(r)[:6] == ["op_name", "total_cases", "passed_cases", "failed_cases", "failures", "environment"]
    assert (r["total_cases"], r["passed_cases"], r["failed_cases"], r["failures"]) == (4, 4, 0, [])
    env = r["environment"]
    assert env["device"]["backend"] == "cpu"
    assert env["torch"]["version"]
    assert env["cmdline"] == {"triton_impl_name": "cpu_impl", "non_compute": False}
    assert set(env["cache"]) >= {"dir", "fresh", "fresh_effective", "always_compile"}
    assert "triton" in env and "timestamp" in env
    cases = r["opverify"]["cases"]
    assert [c["outputs"][0]["dtype"] for c in cases] == ["float32"] * 3 + ["bfloat16"]
    assert all(c["outputs"][0]["route"] == "eco" for c in cases)
    assert "route eco" in err  # the log names the route taken


def test_operator_names_need_not_be_module_names(verify):
    code, r, err = verify("4_abs")
    assert code == 0, err
    assert r["op_name"] == "4_abs" and r["passed_cases"] == 1


def test_accuracy_failure_carries_flat_metrics(verify):
    code, r, _ = verify("scale_accuracy")
    assert code == 1
    failure = r["failures"][0]
    assert failure["case_idx"] == 1
    assert failure["error_type"] == "AccuracyError"
    assert failure["input_desc"] == [{"type": "tensor", "shape": [1000], "dtype": "torch.float32"}]
    m = failure["metrics"]
    assert m["route"] == "eco" and m["matched_ratio"] < 0.99 and m["checks"]["required_matched_ratio"] is False


@pytest.mark.parametrize("op,error_type", [
    ("shape_bad", "ShapeMismatch"),
    ("nan_bad", "NaNMismatch"),
    ("import_bad", "ImportError"),
    ("runtime_bad", "RuntimeError"),
    ("oom", "OutOfMemory"),
    ("hidden_state_bad", "HiddenStateMismatch"),
    ("transpose_signed_zero", "AccuracyError"),
])
def test_each_failure_kind(verify, op, error_type):
    code, r, err = verify(op)
    assert code == 1, err
    assert r["failures"], r
    assert {f["error_type"] for f in r["failures"]} == {error_type}, r["failures"][0]["error_msg"]


def test_error_messages_are_cut_keeping_head_and_tail(verify):
    _, r, _ = verify("import_bad")
    msg = r["failures"][0]["error_msg"]
    assert len(msg) <= 2000
    assert "a_module_that_does_not_exist" in msg


@pytest.mark.parametrize("op,signal", [("crash_segv", "SIGSEGV"), ("crash_abort", "SIGABRT")])
def test_crashes_become_verdicts_with_the_signal(verify, op, signal):
    code, r, _ = verify(op)
    assert code == 1
    failure = r["failures"][0]
    assert failure["error_type"] == "Crash"
    assert signal in failure["error_msg"]


def test_a_crash_costs_only_its_case(verify):
    code, r, _ = verify("crash_second_case")
    assert code == 1
    assert (r["total_cases"], r["passed_cases"]) == (3, 2)
    assert [(f["case_idx"], f["error_type"]) for f in r["failures"]] == [(2, "Crash")]


def test_a_hang_is_stopped_at_the_case_timeout(verify):
    started = time.monotonic()
    code, r, _ = verify("hang", "--timeout", "3")
    elapsed = time.monotonic() - started
    assert code == 1
    assert r["failures"][0]["error_type"] == "Timeout"
    assert elapsed < 30, f"took {elapsed:.0f} s"


def test_quant_route_from_inferred_float_input(verify):
    code, r, err = verify("quant_ok")
    assert code == 0, err
    out = r["opverify"]["cases"][0]["outputs"][0]
    assert out["route"] == "quant" and out["input_type"] == "float" and out["metrics"]["max_abs_diff"] == 1


def test_non_compute_from_the_task_file_is_bitwise(verify):
    code, r, _ = verify("transpose_ok")
    assert code == 0
    assert r["environment"]["cmdline"]["non_compute"] is True
    assert r["opverify"]["cases"][0]["outputs"][0]["route"] == "bitwise"


def test_non_compute_flag_makes_any_operator_bitwise(verify):
    # quant_ok's int8 output is off by one: the quant route passes it, bitwise fails it.
    code, r, _ = verify("quant_ok", "--non-compute")
    assert code == 1
    assert r["environment"]["cmdline"]["non_compute"] is True
    assert r["opverify"]["cases"][0]["outputs"][0]["route"] == "bitwise"


def test_an_implementation_that_writes_into_its_inputs_fails(verify):
    code, r, _ = verify("input_mutate")
    assert code == 1
    failure = r["failures"][0]
    assert failure["error_type"] == "InputMutated"
    assert "input 0 ([4, 1000] float32)" in failure["error_msg"] and "bytes differ" in failure["error_msg"]


def test_an_in_place_reference_lets_the_implementation_write_its_inputs(verify):
    code, r, err = verify("inplace_ok")
    assert code == 0, err
    assert any("writes into its inputs 0" in w for w in r["opverify"]["cases"][0]["warnings"])


def test_a_degenerate_reference_is_flagged(verify):
    code, r, err = verify("degenerate_ref")
    assert code == 0, err  # the outputs do match: the flag says why that proves little
    warnings = r["opverify"]["cases"][0]["warnings"]
    assert any("degenerate reference" in w and "within 1e-6 of zero" in w for w in warnings), warnings
    assert "degenerate reference" in err
    code, r, _ = verify("relu_ok")
    assert not any("degenerate" in w for c in r["opverify"]["cases"] for w in c["warnings"])


def test_stress_runs_catch_outputs_that_change_from_run_to_run(verify):
    code, r, err = verify("jitter_ok")
    assert code == 0, err  # one run passes: the jitter is within tolerance
    code, r, err = verify("jitter_ok", "--repeat", "3")
    assert code == 1
    failure = r["failures"][0]
    assert failure["error_type"] == "Nondeterministic"
    # Each case runs with 3 seeds (1, 2, then 0): the first seed's second run already differs.
    assert failure["error_msg"].startswith("seed 1, run 2 of 3: output 0 differs bit for bit from run 1")
    code, r, err = verify("relu_ok", "--repeat", "3")  # a deterministic operator passes every run
    assert code == 0, err
    assert err.count("[case 1] output 0: route eco") == 9  # 3 seeds, 3 runs each


def test_golden_falls_back_to_the_device(verify):
    code, r, err = verify("golden_fallback")
    assert code == 0, err
    case = r["opverify"]["cases"][0]
    assert "needs the device" in case["golden_fallback_reason"]
    assert "golden fell back to the device" in err


def test_hidden_state_probe_compares_equal_parameters(verify):
    code, r, _ = verify("hidden_state_ok")
    assert code == 0
    probe = r["opverify"]["cases"][0]["hidden_state_probe"]
    assert probe["level"] == "P1" and probe["passed"] is True


def test_fresh_cache_is_private_and_removed_or_kept(verify, tmp_path):
    code, r, err = verify("relu_ok", "--fresh-cache")
    assert code == 0
    cache = r["environment"]["cache"]
    assert cache["fresh"] is True and "opverify_cache_" in cache["dir"]
    assert not os.path.exists(os.path.dirname(cache["dir"]))
    code, r, err = verify("relu_ok", "--fresh-cache", "--keep-cache")
    kept = [line.split("kept at ")[1].strip() for line in err.splitlines() if "kept at" in line]
    assert kept and os.path.isdir(kept[0])
    shutil.rmtree(kept[0])


def test_missing_files_are_usage_errors(verify):
    code, r, err = verify("no_such_operator")
    assert code == 2 and r is None
    assert "no_such_operator_torch.py" in err
