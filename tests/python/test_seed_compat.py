"""`opverify verify --seed-compat` on the CPU fixtures (tests/fixtures/cpu_ops): the seed's
verify.py as its callers know it (docs/SEED_COMPAT.md): no lint, one seed, --timeout for the
whole run, AssertionError for shape/NaN/Inf mismatches, the seed's log lines on stdout."""
import json
import os
import subprocess
import time

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "fixtures", "cpu_ops")


def seed_verify(opverify_bin, tmp_path, op, *flags, compat=True, timeout=120):
    """(exit code, verify_result.json or None, stdout, stderr) of a cpu_impl operator."""
    output = tmp_path / f"{op}.json"
    command = [opverify_bin, "verify", "--op_name", op, "--verify_dir", FIXTURES, "--triton_impl_name", "cpu_impl",
               "--backend", "cpu", "--output", str(output), *(["--seed-compat"] if compat else []), *flags]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    result = json.loads(output.read_text()) if output.exists() else None
    return proc.returncode, result, proc.stdout, proc.stderr


def test_a_passing_operator_runs_once_per_case_without_the_lint(opverify_bin, tmp_path):
    # relu_ok is torch, not Triton: the lint would refuse it, and --seed-compat runs none.
    code, r, out, err = seed_verify(opverify_bin, tmp_path, "relu_ok")
    assert code == 0, out + err
    assert (r["total_cases"], r["passed_cases"], r["failures"]) == (4, 4, [])
    assert r["opverify"]["lint"] is None
    assert [c["seeds"] for c in r["opverify"]["cases"]] == [[0]] * 4  # one seed: the base seed
    assert r["environment"]["cmdline"]["seed_compat"] is True
    lines = out.splitlines()
    assert [line for line in lines if line.startswith("[用例")] == [f"[用例 {i}/4] 通过" for i in range(1, 5)]
    routes = [line for line in lines if line.startswith("[评测模式]")]
    assert routes == ["[评测模式] 模式=eco_open_source(生态开源精度标准,第一标准),dtype=float32"] * 3 + [
        "[评测模式] 模式=eco_open_source(生态开源精度标准,第一标准),dtype=bfloat16"]


def test_the_lint_still_runs_without_seed_compat(opverify_bin, tmp_path):
    code, r, _, _ = seed_verify(opverify_bin, tmp_path, "relu_ok", compat=False)
    assert code == 1 and {f["error_type"] for f in r["failures"]} == {"LintError"}


def test_a_shape_mismatch_is_the_seeds_assertion_error(opverify_bin, tmp_path):
    code, r, out, err = seed_verify(opverify_bin, tmp_path, "shape_bad")
    assert code == 1, out + err
    assert [(f["case_idx"], f["error_type"]) for f in r["failures"]] == [(1, "AssertionError")]
    assert "shape" in r["failures"][0]["error_msg"].lower()
    assert "[用例 1/1] 失败: AssertionError: " in out
    assert r["opverify"]["cases"][0]["outputs"][0]["error_type"] == "ShapeMismatch"  # ours, in our block


def test_nan_and_other_errors_keep_their_names_apart_from_the_pre_checks(opverify_bin, tmp_path):
    code, r, _, _ = seed_verify(opverify_bin, tmp_path, "nan_bad")
    assert code == 1 and {f["error_type"] for f in r["failures"]} == {"AssertionError"}
    code, r, _, _ = seed_verify(opverify_bin, tmp_path, "scale_accuracy")
    assert code == 1 and {f["error_type"] for f in r["failures"]} == {"AccuracyError"}


def test_timeout_is_the_whole_runs(opverify_bin, tmp_path):
    # Five cases of 3 s each: within a per-case limit of 12 s (which also
    # bounds the operator's load: torch's import on a loaded machine) ...
    code, r, out, err = seed_verify(opverify_bin, tmp_path, "slow_cases", "--timeout", "12", "--no-lint", compat=False)
    assert code == 0, out + err
    assert r["passed_cases"] == 5
    (tmp_path / "slow_cases.json").unlink()
    # ... but not within a whole-run limit of 12 s: the seed's line, exit 1, no file.
    started = time.monotonic()
    code, r, out, err = seed_verify(opverify_bin, tmp_path, "slow_cases", "--timeout", "12")
    elapsed = time.monotonic() - started
    assert code == 1, out + err
    assert out.splitlines()[-1] == "验证超时"
    assert r is None
    assert len([line for line in out.splitlines() if line.startswith("[用例")]) < 5
    assert elapsed < 40, f"took {elapsed:.0f} s"


def test_seed_compat_takes_one_seed_only(opverify_bin, tmp_path):
    code, _, _, err = seed_verify(opverify_bin, tmp_path, "relu_ok", "--seeds", "3")
    assert code != 0 and "--seeds" in err
