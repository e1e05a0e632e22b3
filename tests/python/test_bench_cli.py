"""`opverify bench` on the CPU fixtures: the seed's L1 verify gate,
perf_result.json field for field, the overall speedup's rules, failing
shapes, and the options beyond the seed. Real executors timing real torch
forwards (the cpu backend: a monotonic clock); the device path (events, L2
flush, profiler kernels, NVML clock) runs in tests/python/test_gpu_ops.py."""
import json
import math
import os
import shutil
import subprocess

import pytest

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "cpu_ops")
SEED_FIELDS = ["op_name", "warmup", "repeats", "total_cases", "passed_cases", "failed_cases", "nan_indices",
               "inf_indices", "zero_indices", "negative_indices", "none_indices", "framework", "implementation",
               "speedup_vs_torch", "per_shape_results"]
SHAPE_FIELDS = ["case_idx", "input_desc", "status", "framework", "implementation", "speedup_vs_torch",
                "error_type", "error_msg"]


@pytest.fixture
def workdir(tmp_path):
    """A verify_dir of its own: the gate reads (and bench writes) files there."""
    folder = tmp_path / "ops"
    folder.mkdir()
    for name in os.listdir(FIXTURES):
        if name.endswith(".py"):
            shutil.copy(os.path.join(FIXTURES, name), folder / name)
    return folder


def run(opverify_bin, *args, timeout=300):
    return subprocess.run([opverify_bin, *args], capture_output=True, text=True, timeout=timeout)


def verify(opverify_bin, folder, op, impl="cpu_impl"):
    return run(opverify_bin, "verify", "--op_name", op, "--verify_dir", str(folder), "--triton_impl_name", impl,
               "--backend", "cpu", "--no-lint")


def bench(opverify_bin, folder, op, *flags, impl="cpu_impl"):
    proc = run(opverify_bin, "bench", "--op_name", op, "--verify_dir", str(folder), "--triton_impl_name", impl,
               "--backend", "cpu", "--warmup", "2", "--repeats", "5", "--profile-iterations", "2", *flags)
    output = folder / f"perf_result_{impl}.json"
    return proc, (json.loads(output.read_text()) if output.exists() else None)


def input_bytes(input_desc):
    sizes = {"torch.float32": 4, "torch.bfloat16": 2, "torch.float16": 2, "torch.int64": 8, "torch.int8": 1}
    return sum(math.prod(d["shape"]) * sizes[d["dtype"]] for d in input_desc if d["type"] == "tensor")


def test_cpu_peak_memory_sees_what_the_forward_allocates(opverify_bin, tmp_path):
    # The implementation makes a 64 MiB temporary; the framework does not.
    (tmp_path / "big_tmp_torch.py").write_text(
        "import torch\n\n\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n\n\n"
        "def get_init_inputs():\n    return []\n\n\ndef get_inputs():\n    return [torch.ones(1024)]\n")
    (tmp_path / "big_tmp_cpu_impl.py").write_text(
        "import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
        "        scratch = torch.ones(16 * 1024 * 1024)\n        return x + scratch[:1024]\n")
    proc, perf = bench(opverify_bin, tmp_path, "big_tmp", "--verify_not_required")
    assert proc.returncode == 0, proc.stderr
    shape = perf["per_shape_results"][0]
    assert shape["implementation"]["added_memory_mb"] >= 60
    assert shape["framework"]["added_memory_mb"] < 16
    assert shape["implementation"]["peak_memory_mb"] > shape["framework"]["peak_memory_mb"] + 48


def test_gate_refuses_without_a_verify_result(opverify_bin, workdir):
    proc, perf = bench(opverify_bin, workdir, "relu_ok")
    assert proc.returncode == 2
    assert "verify_result_cpu_impl.json" in proc.stderr and "no verify result" in proc.stderr
    assert perf is None


@pytest.mark.parametrize("content, why", [
    ("{not json", "malformed JSON"),
    (json.dumps({"op_name": "relu_ok", "total_cases": 0, "passed_cases": 0}), "total_cases is 0"),
    (json.dumps({"op_name": "relu_ok", "passed_cases": 1}), "missing"),
    (json.dumps({"op_name": "relu_ok", "total_cases": 2, "passed_cases": 3}), "more than total_cases"),
    (json.dumps({"op_name": "relu_ok", "total_cases": 2.5, "passed_cases": 2.5}), "not an integer"),
])
def test_gate_refuses_an_unusable_verify_result(opverify_bin, workdir, content, why):
    (workdir / "verify_result_cpu_impl.json").write_text(content)
    proc, perf = bench(opverify_bin, workdir, "relu_ok")
    assert proc.returncode == 2 and why in proc.stderr
    assert perf is None


def test_gate_reads_integral_floats_as_the_seed_does(opverify_bin, workdir):
    (workdir / "verify_result_cpu_impl.json").write_text(
        json.dumps({"op_name": "relu_ok", "total_cases": 4.0, "passed_cases": 4.0}))
    proc, perf = bench(opverify_bin, workdir, "relu_ok")
    assert proc.returncode == 0, proc.stderr
    assert perf["total_cases"] == 4


def test_gate_refuses_a_failed_verify_and_shows_its_first_failures(opverify_bin, workdir):
    assert verify(opverify_bin, workdir, "scale_accuracy").returncode == 1
    proc, perf = bench(opverify_bin, workdir, "scale_accuracy")
    assert proc.returncode == 2
    assert "0/1 cases passed" in proc.stderr and "AccuracyError" in proc.stderr
    assert perf is None


def test_verified_operator_gets_the_seed_perf_result(opverify_bin, workdir):
    assert verify(opverify_bin, workdir, "relu_ok").returncode == 0
    proc, perf = bench(opverify_bin, workdir, "relu_ok")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert list(perf)[:len(SEED_FIELDS)] == SEED_FIELDS
    assert (perf["op_name"], perf["warmup"], perf["repeats"]) == ("relu_ok", 2, 5)
    assert (perf["total_cases"], perf["passed_cases"], perf["failed_cases"]) == (4, 4, 0)
    shapes = perf["per_shape_results"]
    assert [s["case_idx"] for s in shapes] == [1, 2, 3, 4]
    for s in shapes:
        assert list(s)[:len(SHAPE_FIELDS)] == SHAPE_FIELDS
        assert s["status"] == "pass" and s["error_type"] is None and s["error_msg"] is None
        assert s["input_desc"][0]["type"] == "tensor"
        for side in ("framework", "implementation"):
            stats = s[side]["stats"]
            assert stats["repeats"] == 5 and stats["min_ms"] <= stats["median_ms"] <= stats["max_ms"]
            assert s[side]["avg_latency_ms"] == stats["median_ms"] > 0
            # The cpu backend: the inputs (no weights here) plus the resident-set growth.
            resident_mb = input_bytes(s["input_desc"]) / 2**20
            assert s[side]["added_memory_mb"] >= 0
            assert s[side]["peak_memory_mb"] == pytest.approx(resident_mb + s[side]["added_memory_mb"])
            assert any(name.startswith("aten::") for name in s[side]["operators"])
        assert s["speedup_vs_torch"] == pytest.approx(s["framework"]["avg_latency_ms"] /
                                                      s["implementation"]["avg_latency_ms"])
    # The overall speedup is the geometric mean of the shapes'; the top-level
    # latencies are the arithmetic means of the shapes' (the seed's meaning).
    logs = [math.log(s["speedup_vs_torch"]) for s in shapes]
    assert perf["speedup_vs_torch"] == pytest.approx(math.exp(sum(logs) / len(logs)))
    assert perf["implementation"]["avg_latency_ms"] == pytest.approx(
        sum(s["implementation"]["avg_latency_ms"] for s in shapes) / 4)
    for key in ("nan_indices", "inf_indices", "zero_indices", "negative_indices", "none_indices"):
        assert perf[key] == []
    assert perf["environment"]["device"]["backend"] == "cpu"
    assert perf["opverify"]["clock"] is None  # no device clock on the cpu backend
    assert "monotonic" in perf["opverify"]["timing"]
    assert "speedup" in proc.stdout


def test_default_output_follows_the_implementation_name(opverify_bin, workdir):
    # triton_<x> -> perf_result_<x>.json beside verify_result_<x>.json
    shutil.copy(workdir / "relu_ok_cpu_impl.py", workdir / "relu_ok_triton_fast.py")
    assert verify(opverify_bin, workdir, "relu_ok", impl="triton_fast").returncode == 0
    assert (workdir / "verify_result_fast.json").exists()
    proc = run(opverify_bin, "bench", "--op_name", "relu_ok", "--verify_dir", str(workdir), "--triton_impl_name",
               "triton_fast", "--backend", "cpu", "--warmup", "1", "--repeats", "3")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads((workdir / "perf_result_fast.json").read_text())["passed_cases"] == 4


def test_a_crashing_shape_fails_alone(opverify_bin, workdir):
    proc, perf = bench(opverify_bin, workdir, "crash_second_case", "--verify_not_required")
    assert proc.returncode == 0, proc.stderr[-2000:]  # the run completed; shape 2's failure is in the file
    shapes = perf["per_shape_results"]
    assert [s["status"] for s in shapes] == ["pass", "fail", "pass"]
    assert shapes[1]["error_type"] == "Crash" and "SIGSEGV" in shapes[1]["error_msg"]
    assert shapes[1]["speedup_vs_torch"] is None
    assert (perf["passed_cases"], perf["failed_cases"]) == (2, 1)
    # A failed shape is no anomaly: it is outside the speedup's index lists.
    assert perf["none_indices"] == []
    assert perf["speedup_vs_torch"] == pytest.approx(
        math.sqrt(shapes[0]["speedup_vs_torch"] * shapes[2]["speedup_vs_torch"]))


def test_a_failing_shape_still_names_its_inputs(opverify_bin, workdir):
    proc, perf = bench(opverify_bin, workdir, "runtime_bad", "--verify_not_required")
    assert proc.returncode == 0, proc.stderr[-2000:]
    shape = perf["per_shape_results"][0]
    assert (shape["status"], shape["error_type"]) == ("fail", "RuntimeError")
    assert shape["input_desc"] == [{"type": "tensor", "shape": [4], "dtype": "torch.float32"}]
    assert list(shape["input_desc"][0]) == ["type", "shape", "dtype"]  # the seed's key order
    proc, perf = bench(opverify_bin, workdir, "scalar_args_bad", "--verify_not_required")
    assert proc.returncode == 0, proc.stderr[-2000:]
    desc = perf["per_shape_results"][0]["input_desc"]
    assert desc[1:4] == [{"type": "scalar", "value": 2}, {"type": "scalar", "value": 0.5},
                         {"type": "scalar", "value": "None"}]


def test_an_implementation_that_fails_to_import_fails_every_shape(opverify_bin, workdir):
    proc, perf = bench(opverify_bin, workdir, "import_bad_cases", "--verify_not_required")
    # The seed: exit 1 only when the script itself crashed; failed shapes are in the file.
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert (perf["total_cases"], perf["passed_cases"], perf["failed_cases"]) == (3, 0, 3)
    shapes = perf["per_shape_results"]
    assert [(s["case_idx"], s["status"], s["error_type"]) for s in shapes] == [
        (1, "fail", "ImportError"), (2, "fail", "ImportError"), (3, "fail", "ImportError")]
    assert all("a_module_that_does_not_exist" in s["error_msg"] for s in shapes)
    assert [s["input_desc"] for s in shapes] == [
        [{"type": "tensor", "shape": [rows, cols], "dtype": "torch.float32"}]
        for rows, cols in ((4, 1000), (3, 1023), (8, 4096))]
    assert perf["speedup_vs_torch"] is None


def test_given_framework_latency(opverify_bin, workdir):
    proc, perf = bench(opverify_bin, workdir, "relu_ok", "--verify_not_required", "--skip_framework",
                       "--framework_latency_ms", "2.0")
    assert proc.returncode == 0, proc.stderr[-2000:]
    for s in perf["per_shape_results"]:
        assert s["framework"]["avg_latency_ms"] == 2.0 and s["framework"]["stats"] is None
        assert s["speedup_vs_torch"] == pytest.approx(2.0 / s["implementation"]["avg_latency_ms"])
    assert perf["framework"]["avg_latency_ms"] == 2.0


def test_skipped_framework_without_a_latency_gives_none(opverify_bin, workdir):
    proc, perf = bench(opverify_bin, workdir, "relu_ok", "--verify_not_required", "--skip_framework")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert perf["none_indices"] == [1, 2, 3, 4]
    assert perf["speedup_vs_torch"] is None
    assert all(s["status"] == "pass" and s["speedup_vs_torch"] is None for s in perf["per_shape_results"])


def test_adaptive_repeats_stop_on_their_rule(opverify_bin, workdir):
    proc, perf = bench(opverify_bin, workdir, "relu_ok", "--verify_not_required", "--adaptive",
                       "--max-repeats", "40", "--rse-target", "0.5")
    assert proc.returncode == 0, proc.stderr[-2000:]
    for s in perf["per_shape_results"]:
        stats = s["implementation"]["stats"]
        assert 5 <= stats["repeats"] <= 40
        assert stats["stopped_by"] in ("rse", "max_repeats", "max_seconds")
        if stats["stopped_by"] == "rse":
            assert stats["rse"] < 0.5
    assert perf["opverify"]["settings"]["adaptive"] is True


@pytest.mark.parametrize("flags", [["--warmup", "-1"], ["--repeats", "0"], ["--lock-frequency-fail-action", "x"]])
def test_bad_usage_is_exit_2(opverify_bin, workdir, flags):
    proc = run(opverify_bin, "bench", "--op_name", "relu_ok", "--verify_dir", str(workdir), *flags)
    assert proc.returncode == 2


def test_missing_operator_files_past_the_gate_are_exit_1(opverify_bin, workdir):
    # The seed's exit 1: the script itself could not run. (With the gate on,
    # the missing verify file closes it first: exit 2.)
    proc = run(opverify_bin, "bench", "--op_name", "nope", "--verify_dir", str(workdir), "--verify_not_required")
    assert proc.returncode == 1 and "nope_torch.py" in proc.stderr
    gated = run(opverify_bin, "bench", "--op_name", "nope", "--verify_dir", str(workdir))
    assert gated.returncode == 2 and "gate" in gated.stderr


def test_output_in_a_new_folder_is_measured(opverify_bin, workdir, tmp_path):
    # The seed's own usage: --output {path}/iter_{n}/perf_result.json.
    output = tmp_path / "iter_0" / "perf_result.json"
    proc = run(opverify_bin, "bench", "--op_name", "relu_ok", "--verify_dir", str(workdir), "--verify_not_required",
               "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--warmup", "0", "--repeats", "2",
               "--output", str(output))
    assert proc.returncode == 0, proc.stderr
    perf = json.loads(output.read_text())
    assert perf["passed_cases"] == perf["total_cases"] > 0
