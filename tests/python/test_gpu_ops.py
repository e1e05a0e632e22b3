"""The real operators of jobs/ on a GPU: every honest operator passes, every
planted defect fails with its task file's EXPECTED_ERROR_TYPE (and lint
defects with their EXPECTED_LINT_TYPE). Skipped where torch sees no CUDA
device; run for real on the H200 through the device tool.

OPVERIFY_GPU_REPORT=<file> also writes one JSON line per operator.
"""
import glob
import json
import os
import subprocess

import pytest

from test_lint import task_constants

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the GPU operator tests run on the H200", allow_module_level=True)

JOBS = os.path.join(os.path.dirname(__file__), "..", "..", "jobs")
SLOW_COMPILE = os.path.join(os.path.dirname(__file__), "..", "fixtures", "gpu_compile")


def operators(folder):
    return sorted(os.path.basename(p)[:-len("_torch.py")] for p in glob.glob(os.path.join(JOBS, folder, "*_torch.py")))


def run_verify(opverify_bin, tmp_path, folder, op, timeout_s):
    output = tmp_path / f"{op}.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", op, "--verify_dir", os.path.join(JOBS, folder),
                           "--triton_impl_name", "triton_impl", "--backend", "cuda", "--timeout", str(timeout_s),
                           "--output", str(output)], capture_output=True, text=True, timeout=900)
    result = json.loads(output.read_text()) if output.exists() else None
    report = os.environ.get("OPVERIFY_GPU_REPORT")
    if report and result is not None:
        with open(report, "a") as f:
            f.write(json.dumps({"folder": folder, "op": op, "exit": proc.returncode,
                                "passed": result["passed_cases"], "total": result["total_cases"],
                                "errors": sorted({x["error_type"] for x in result["failures"]}),
                                "lint": (result["opverify"]["lint"] or {}).get("regression_type"),
                                "device": result["environment"].get("device", {}).get("name")}) + "\n")
    return proc, result


@pytest.mark.parametrize("op", operators("ops"))
def test_honest_operator_passes(opverify_bin, tmp_path, op):
    proc, result = run_verify(opverify_bin, tmp_path, "ops", op, 300)
    assert result is not None, proc.stderr[-3000:]
    assert proc.returncode == 0, json.dumps(result["failures"], indent=1)[:4000]
    assert result["passed_cases"] == result["total_cases"] > 0
    assert result["environment"]["triton"]["key_sha256"]
    assert result["environment"]["device"]["name"]


@pytest.mark.parametrize("op", operators("defects"))
def test_planted_defect_fails_as_expected(opverify_bin, tmp_path, op):
    expected = task_constants(os.path.join(JOBS, "defects", f"{op}_torch.py"))
    proc, result = run_verify(opverify_bin, tmp_path, "defects", op, 20)
    assert result is not None, proc.stderr[-3000:]
    assert proc.returncode == 1
    errors = {f["error_type"] for f in result["failures"]}
    assert errors == {expected["EXPECTED_ERROR_TYPE"]}, json.dumps(result["failures"], indent=1)[:3000]
    if "EXPECTED_LINT_TYPE" in expected:
        assert result["opverify"]["lint"]["regression_type"] == expected["EXPECTED_LINT_TYPE"]


def test_batch_splits_out_triton_compilation(opverify_bin, tmp_path):
    """opverify-batch on jobs/smoke.json: Triton's compilation is timed by
    the executor and kept out of the implementation's time."""
    import h5py
    batch = os.path.join(os.path.dirname(opverify_bin), "opverify-batch")
    run_dir = tmp_path / "run"
    proc = subprocess.run([batch, os.path.join(JOBS, "smoke.json"), "--backend", "cuda", "--run-dir", str(run_dir),
                           "--no-bench"], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    split = json.loads((run_dir / "summary.json").read_text())["time_split"]
    assert split["compile_s"] > 0
    assert split["checks_s"] > 0  # the runtime evidence judged around each first run, timed apart
    with h5py.File(run_dir / "results.h5", "r") as f:
        table = f["cases"][:]
    cases = table[table["case_index"] >= 0]
    # Each operator's first case compiles its kernels; a case whose kernels
    # are already compiled in that executor records (almost) none.
    assert (cases["compile_ms"] > 1).any()
    assert (cases["compile_ms"] < cases["wall_ms"]).all()
    assert abs(split["compile_s"] - cases["compile_ms"].sum() / 1e3) < 1e-6


def test_a_persistent_cache_dir_compiles_nothing_the_second_night(opverify_bin, tmp_path):
    """Two nights of the same job with --cache-dir: the second loads every
    kernel from the rank's persistent cache (compile seconds near 0), while
    the A/B of its accuracy failure still compiles afresh (fresh_effective).
    slow_compile's kernel (tests/fixtures/gpu_compile) takes the compiler
    seconds, so the first night's compile time is far above noise."""
    import h5py
    batch = os.path.join(os.path.dirname(opverify_bin), "opverify-batch")
    manifest = tmp_path / "nightly.json"
    manifest.write_text(json.dumps({"name": "nightly", "defaults": {"impl_name": "triton_impl", "timeout_s": 300},
                                    "operators": [
                                        {"name": "softmax", "dir": os.path.join(JOBS, "ops"),
                                         "sweep": {"rows": [128], "cols": [1000, 1023], "dtype": ["float16"]}},
                                        {"name": "slow_compile", "dir": SLOW_COMPILE},
                                        {"name": "gelu_mask_bug", "dir": os.path.join(JOBS, "defects")}]}))
    cache = tmp_path / "cache"
    splits, ab, compiled = [], None, []
    for night in ("one", "two"):
        run_dir = tmp_path / night
        proc = subprocess.run([batch, str(manifest), "--backend", "cuda", "--run-dir", str(run_dir), "--no-bench",
                               "--cache-dir", str(cache)], capture_output=True, text=True, timeout=900)
        assert proc.returncode == 1, proc.stderr[-3000:]  # gelu_mask_bug fails by design
        summary = json.loads((run_dir / "summary.json").read_text())
        assert summary["compiler_cache"] == {"persistent": True, "dir": str(cache)}
        splits.append(summary["time_split"]["compile_s"])
        compiled.append({op["name"]: op.get("compile") for op in summary["operators"]})
        assert "compile_cached_s" in summary["time_split"], summary["time_split"]
        with h5py.File(run_dir / "shards" / "rank-0000.h5", "r") as f:
            ab = [json.loads(f["cases"][n].attrs["ab"]) for n in f["cases"]
                  if f["cases"][n].attrs["case_index"] >= 0 and f["cases"][n].attrs["op_name"] == "gelu_mask_bug"
                  and f["cases"][n].attrs["ab"] not in ("", "null")]
    first, second = splits
    print(f"compile_s: first night {first:.3f}, second night {second:.3f}")
    assert first > 1.0 and second < max(0.25, 0.05 * first), splits
    # What the disk cache served, per operator: nothing on night one (an empty cache), every
    # kernel on night two (Triton's compile listener reports each load as a cache hit).
    one, two = (c["slow_compile"] for c in compiled)
    assert one["kernels"] >= 1 and one["kernels_from_cache"] == 0, compiled
    assert two["kernels"] >= 1 and two["kernels_from_cache"] == two["kernels"], compiled
    # The bounded A/B re-runs an operator's first failure of each kind; the others inherit its
    # class (inherited_from) and have no attempts of their own to check.
    rerun = [a for a in ab if "inherited_from" not in a]
    assert rerun and all(a["fresh_effective"] is True for a in rerun), ab
    assert all(a["classification"] == "real_defect" for a in ab), ab
    fresh = [t["cache_dir"] for a in rerun for t in a["attempts"] if t["label"] == "fresh_cache"]
    assert fresh and not any(d.startswith(str(cache)) for d in fresh), fresh


def test_bench_times_on_the_device(opverify_bin, tmp_path):
    """opverify bench on a real Triton operator: device events, the
    allocator's peak, the profiler's kernels and the NVML clock."""
    output = tmp_path / "perf.json"
    proc = subprocess.run([opverify_bin, "bench", "--op_name", "softmax", "--verify_dir", os.path.join(JOBS, "ops"),
                           "--triton_impl_name", "triton_impl", "--backend", "cuda", "--verify_not_required",
                           "--warmup", "3", "--repeats", "20", "--freq-check-interval", "0.2",
                           "--output", str(output)], capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    perf = json.loads(output.read_text())
    assert perf["passed_cases"] == perf["total_cases"] > 0
    assert perf["speedup_vs_torch"] > 0
    for shape in perf["per_shape_results"]:
        impl = shape["implementation"]
        assert impl["avg_latency_ms"] > 0 and impl["peak_memory_mb"] > 0
        assert impl["peak_memory_mb"] < 256  # the L2 flush buffer is not the forward's
        assert impl["stats"]["repeats"] == 20
        # The implementation's own Triton kernel shows in the profile.
        assert any("softmax" in name.lower() for name in impl["operators"]), impl["operators"]
        assert shape["framework"]["operators"]
    assert "device events" in perf["opverify"]["timing"]
    clock = perf["opverify"]["clock"]
    assert clock["source"] == "nvml" and clock["device"].startswith("GPU-") and clock["samples"] >= 1
    assert clock["baseline_mhz"] > 0
