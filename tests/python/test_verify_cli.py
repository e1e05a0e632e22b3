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


def run_verify(opverify_bin, op, verify_dir, *flags, timeout=120):
    """`opverify verify` of a cpu_impl operator on the cpu backend."""
    return subprocess.run([opverify_bin, "verify", "--op_name", op, "--verify_dir", str(verify_dir),
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", *flags],
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture
def verify(opverify_bin, tmp_path):
    """verify(op, *flags) -> (exit code, verify_result.json as dict, stderr)."""
    def run(op, *flags, timeout=120):
        output = tmp_path / f"{op}.json"
        proc = run_verify(opverify_bin, op, FIXTURES, "--no-lint", "--output", str(output), *flags, timeout=timeout)
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
    assert env["cmdline"] == {"triton_impl_name": "cpu_impl", "non_compute": False, "non_compute_effective": False}
    assert set(env["cache"]) >= {"dir", "fresh", "fresh_effective", "always_compile"}
    assert "triton" in env and "timestamp" in env
    # The seed's fingerprint has cann on every machine: off Ascend, the reason it is missing.
    assert list(env)[:4] == ["timestamp", "triton", "cache", "cann"]
    if not os.environ.get("ASCEND_HOME_PATH"):
        assert env["cann"] == {"error": "EnvironmentError: ASCEND_HOME_PATH is not set (source set_env.sh)"}
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
    # cmdline records the flag as given (none); the task's NON_COMPUTE is what took effect.
    assert r["environment"]["cmdline"]["non_compute"] is False
    assert r["environment"]["cmdline"]["non_compute_effective"] is True
    assert r["opverify"]["cases"][0]["outputs"][0]["route"] == "bitwise"


def test_non_compute_flag_makes_any_operator_bitwise(verify):
    # quant_ok's int8 output is off by one: the quant route passes it, bitwise fails it.
    code, r, _ = verify("quant_ok", "--non-compute")
    assert code == 1
    assert r["environment"]["cmdline"]["non_compute"] is True
    assert r["environment"]["cmdline"]["non_compute_effective"] is True
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


def test_missing_files_fail_as_nothing_verified(verify):
    # The seed's strict rule: anything but all cases passed is exit 1.
    code, r, err = verify("no_such_operator")
    assert code == 1 and r is None
    assert "no_such_operator_torch.py" in err


def test_default_output_is_the_seeds_and_the_gates_file(opverify_bin, tmp_path):
    for name in ("relu_ok_torch.py", "relu_ok_cpu_impl.py"):
        shutil.copy(os.path.join(FIXTURES, name), tmp_path / name)
    proc = run_verify(opverify_bin, "relu_ok", tmp_path, "--no-lint")
    assert proc.returncode == 0, proc.stderr
    seed_default = json.loads((tmp_path / "verify_result.json").read_text())
    assert seed_default["passed_cases"] == seed_default["total_cases"] == 4
    # What `opverify bench --triton_impl_name cpu_impl` reads: the same result.
    assert json.loads((tmp_path / "verify_result_cpu_impl.json").read_text()) == seed_default
    gate = subprocess.run([opverify_bin, "bench", "--op_name", "relu_ok", "--verify_dir", str(tmp_path),
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--repeats", "2", "--warmup", "0"],
                          capture_output=True, text=True, timeout=120)
    assert gate.returncode == 0, gate.stderr


def test_output_folder_is_made_first(opverify_bin, tmp_path):
    output = tmp_path / "new" / "iter_0" / "verify_result.json"
    proc = run_verify(opverify_bin, "relu_ok", FIXTURES, "--no-lint", "--output", str(output))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(output.read_text())["passed_cases"] == 4


def test_a_long_multibyte_message_is_cut_on_characters(opverify_bin, tmp_path):
    # 3000 CJK characters (9000 bytes) in the exception: cut to the seed's
    # 2000 characters with its marker, never inside a character, and written.
    shutil.copy(os.path.join(FIXTURES, "relu_ok_torch.py"), tmp_path / "wide_torch.py")
    (tmp_path / "wide_cpu_impl.py").write_text(
        "import torch\n\n\nclass ModelNew(torch.nn.Module):\n"
        "    def forward(self, x):\n        raise ValueError('\\u9519\\u8bef' * 1500)\n")
    proc = run_verify(opverify_bin, "wide", tmp_path, "--no-lint", "--seeds", "1")
    assert proc.returncode == 1, proc.stderr
    result = json.loads((tmp_path / "verify_result.json").read_text(encoding="utf-8"))
    assert result["failed_cases"] == result["total_cases"] == 4
    message = result["failures"][0]["error_msg"]
    assert "\n... [truncated " in message and " chars] ...\n" in message
    head, tail = message.split("\n... [truncated ")
    assert tail.rstrip().endswith("\u9519\u8bef" * 10)
    assert len(head) + len(tail.split(" chars] ...\n")[1]) == 2000


TENSOR_4 = {"type": "tensor", "shape": [4], "dtype": "torch.float32"}


@pytest.mark.parametrize("op", ["runtime_bad", "oom", "hidden_state_bad"])
def test_execution_failures_carry_their_input_desc(verify, op):
    # The inputs are built and described before the models: whatever fails
    # after that (ModelNew's forward, its construction, the probe) says what it got.
    code, r, _ = verify(op)
    assert code == 1
    assert r["failures"] and all(f["input_desc"] and f["input_desc"][0]["type"] == "tensor" for f in r["failures"])


def test_a_runtime_error_names_its_input(verify):
    _, r, _ = verify("runtime_bad")
    assert [f["input_desc"] for f in r["failures"]] == [[TENSOR_4]]


def test_non_tensor_inputs_are_described_as_the_seed_does(verify):
    code, r, _ = verify("scalar_args_bad")
    assert code == 1
    desc = r["failures"][0]["input_desc"]
    assert desc[:6] == [
        {"type": "tensor", "shape": [8], "dtype": "torch.float32"},
        {"type": "scalar", "value": 2},
        {"type": "scalar", "value": 0.5},
        {"type": "scalar", "value": "None"},  # repr: the seed keeps only bool, int, float and str as they are
        {"type": "scalar", "value": "sum"},
        {"type": "scalar", "value": True},
    ]
    assert [list(d) for d in desc[:2]] == [["type", "shape", "dtype"], ["type", "value"]]  # the seed's key order
    parts = desc[6]
    assert list(parts) == ["type", "value", "items"]
    assert parts["type"] == "scalar" and parts["value"].startswith("[tensor([")
    assert parts["items"] == [{"type": "tensor", "shape": [8], "dtype": "torch.float32"},
                              {"type": "tensor", "shape": [8], "dtype": "torch.float64"}]


def test_an_implementation_that_fails_to_import_fails_every_case(verify):
    code, r, _ = verify("import_bad_cases")
    assert code == 1
    assert (r["total_cases"], r["passed_cases"], r["failed_cases"]) == (3, 0, 3)
    assert [f["case_idx"] for f in r["failures"]] == [1, 2, 3]
    assert {f["error_type"] for f in r["failures"]} == {"ImportError"}
    assert all("a_module_that_does_not_exist" in f["error_msg"] for f in r["failures"])
    assert [f["input_desc"] for f in r["failures"]] == [
        [{"type": "tensor", "shape": [rows, cols], "dtype": "torch.float32"}]
        for rows, cols in ((4, 1000), (3, 1023), (8, 4096))]


def test_a_lint_failure_still_describes_each_case(opverify_bin, tmp_path):
    # relu_ok is torch only: the lint refuses it (no Triton kernel does the work).
    output = tmp_path / "lint.json"
    proc = run_verify(opverify_bin, "relu_ok", FIXTURES, "--output", str(output))
    assert proc.returncode == 1, proc.stderr[-2000:]
    r = json.loads(output.read_text())
    assert r["total_cases"] == 4 and {f["error_type"] for f in r["failures"]} == {"LintError"}
    assert [f["input_desc"][0]["shape"] for f in r["failures"]] == [[4, 1000], [3, 1023], [1, 1], [8, 4096]]
    assert r["failures"][3]["input_desc"][0]["dtype"] == "torch.bfloat16"


def test_a_lazy_conjugate_is_compared_by_its_values(verify):
    # torch.conj(x) is x's memory with a flag: shipped raw, it would equal x.clone().
    code, r, _ = verify("conj_bad")
    assert code == 1, r
    assert r["failures"][0]["error_type"] == "AccuracyError"
    assert r["failures"][0]["input_desc"] == [{"type": "tensor", "shape": [64, 32], "dtype": "torch.complex64"}]


def test_describe_input_follows_the_seed_rule():
    import math
    import torch
    from opverify_runtime.case_io import describe_inputs
    desc = describe_inputs([torch.zeros(2, 3, dtype=torch.float16), 7, 1.5, "x", False, None, math.inf,
                            (torch.ones(1),), torch.float32], torch)
    assert desc == [
        {"type": "tensor", "shape": [2, 3], "dtype": "torch.float16"},
        {"type": "scalar", "value": 7}, {"type": "scalar", "value": 1.5}, {"type": "scalar", "value": "x"},
        {"type": "scalar", "value": False}, {"type": "scalar", "value": "None"},
        {"type": "scalar", "value": "inf"},  # JSON has no Infinity: its repr
        {"type": "scalar", "value": repr((torch.ones(1),)),
         "items": [{"type": "tensor", "shape": [1], "dtype": "torch.float32"}]},
        {"type": "scalar", "value": "torch.float32"}]
    json.dumps(desc, allow_nan=False)


def test_shipped_tensors_are_materialised():
    import torch
    from opverify_runtime.case_io import as_bytes
    from opverify_runtime.executor import Session
    x = torch.randn(5, dtype=torch.complex64)
    conj = torch.conj(x)
    neg = conj.imag  # the imaginary part of a conjugate view: a negative view
    assert conj.is_conj() and neg.is_neg()  # lazy: a flag on x's memory
    assert not torch.equal(as_bytes(conj, torch), as_bytes(x, torch))
    session = Session()
    session.op_ship = lambda request: ({}, [conj, neg])
    _, shipped = session.handle_json(json.dumps({"op": "ship"}))
    assert not shipped[0].is_conj() and torch.equal(shipped[0], torch.conj(x))
    assert not shipped[1].is_neg() and torch.equal(shipped[1], -x.imag)


def test_the_npu_device_section_has_the_seed_name():
    import torch
    from opverify_runtime import environment

    class FakeNpu:
        name = "npu"
        visible_devices_variable = "ASCEND_RT_VISIBLE_DEVICES"

        def device_name(self):
            return "Ascend910B4"

        def visible_devices(self):
            return "3"

        def device_uuid(self):
            return None

        def compute_units(self):
            return 20, "AI core"
    env = environment.collect(torch, FakeNpu())
    assert env["device"]["npu_name"] == env["device"]["name"] == "Ascend910B4"
    assert env["device"]["ASCEND_RT_VISIBLE_DEVICES"] == "3"
    assert "cann" in env and "cuda" not in env


def test_a_complex32_output_is_judged_on_its_float16_parts(verify):
    # FlagGems' chalf returns torch.complex32; the judge refused the dtype
    # ("which the judge does not know") on the device: a false failure.
    code, r, err = verify("chalf_out_ok")
    assert code == 0, err
    assert r["passed_cases"] == r["total_cases"] == 1
    output = r["opverify"]["cases"][0]["outputs"][0]
    assert output["dtype"] == "complex32", output
    code, r, err = verify("chalf_out_bad")
    assert code == 1, err
    assert r["failures"][0]["error_type"] == "AccuracyError", r["failures"]


def test_a_complex32_input_counts_as_a_float_input(verify):
    # complex32 input, int64 output one off: the quant route (|diff| <= 1)
    # applies as for any float input; were the dtype dropped it would be
    # "no tensor" and the exact route would fail every element.
    code, r, err = verify("chalf_quant_ok")
    assert code == 0, err
    assert r["passed_cases"] == r["total_cases"] == 1
