"""The trust boundary (docs/SECURITY.md): the golden is made in an executor that never imports the
implementation, the runtime's code in the implementation's executor is sealed, and no executor
serves two operators' implementations. Hostile fixtures (tests/fixtures/hostile/forge_*,
patch_runtime_first) through the real `opverify verify`, `opverify lint` and `opverify-batch`
(one rank, the patcher first); OPVERIFY_SHARED_GOLDEN=1 (the single process of before) shows each attack is real."""
import importlib.util
import json
import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HOSTILE = os.path.join(ROOT, "tests", "fixtures", "hostile")
CPU_OPS = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")
TRITON_CPU = os.path.join(ROOT, "tests", "fixtures", "waiver", "triton_cpu")  # a CPU stand-in for Triton
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
FORGES = ["forge_forward", "forge_torch", "forge_runtime", "patch_runtime_first"]


def expected(op):
    source = open(os.path.join(HOSTILE, f"{op}_torch.py")).read()
    line = next(text for text in source.splitlines() if text.startswith("EXPECTED_ERROR_TYPE"))
    scope = {}
    exec(line, scope)
    return scope["EXPECTED_ERROR_TYPE"]


@pytest.fixture(scope="session")
def batch_bin():
    path = os.path.join(BUILD, "runner", "opverify-batch")
    assert os.access(path, os.X_OK), path
    return path


@pytest.fixture
def env(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    environment = dict(os.environ, HOME=str(home), OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", **MPI_ENV)
    environment.pop("OPVERIFY_SHARED_GOLDEN", None)
    return environment


def verify(opverify_bin, op, env, tmp_path, *flags):
    output = tmp_path / f"{op}.verify_result.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", op, "--verify_dir", HOSTILE,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--timeout", "60",
                           "--python-path", TRITON_CPU, "--output", str(output), *flags],
                          capture_output=True, text=True, timeout=300, env=env)
    assert output.exists(), f"exit {proc.returncode}: {proc.stderr[-3000:]}"
    return proc, json.loads(output.read_text())


def error_types(result):
    failed = {f["case_idx"]: f["error_type"] for f in result["failures"]}
    return [failed.get(index) for index in range(1, result["total_cases"] + 1)]


@pytest.mark.parametrize("op", FORGES)
def test_a_forged_golden_fails(opverify_bin, env, tmp_path, op):
    proc, result = verify(opverify_bin, op, env, tmp_path)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert error_types(result) == [expected(op)], result["failures"]
    if expected(op) == "RuntimeTampered":
        message = result["failures"][0]["error_msg"]
        assert "opverify_runtime.executor.Session.op_run_case" in message, message


@pytest.mark.parametrize("op", ["forge_forward", "forge_torch"])
def test_the_forges_pass_where_the_golden_is_made_beside_the_implementation(opverify_bin, env, tmp_path, op):
    # The attack is real: in the single process of before, the forged golden passes.
    env["OPVERIFY_SHARED_GOLDEN"] = "1"
    proc, result = verify(opverify_bin, op, env, tmp_path)
    assert proc.returncode == 0 and error_types(result) == [None], result["failures"]


def test_the_runtime_forge_passes_the_lint(opverify_bin, env):
    # Triton-shaped: the static lint finds nothing to object to; only the seal catches it.
    proc = subprocess.run([opverify_bin, "lint", os.path.join(HOSTILE, "forge_runtime_cpu_impl.py")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]


def test_an_honest_operator_still_passes_across_the_boundary(opverify_bin, env, tmp_path):
    # Several cases, golden from one process and actual from another, judged together.
    output = tmp_path / "relu.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", "relu_ok", "--verify_dir", CPU_OPS,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--output", str(output)],
                          capture_output=True, text=True, timeout=300, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    result = json.loads(output.read_text())
    assert result["passed_cases"] == result["total_cases"] == 4


def test_an_implementation_that_writes_into_its_inputs_is_still_caught(opverify_bin, env, tmp_path):
    # InputMutated needs the reference's writes, which now come from the other process.
    output = tmp_path / "mutate.json"
    subprocess.run([opverify_bin, "verify", "--op_name", "input_mutate", "--verify_dir", CPU_OPS,
                    "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--output", str(output)],
                   capture_output=True, text=True, timeout=300, env=env)
    assert set(error_types(json.loads(output.read_text()))) == {"InputMutated"}


def batch_manifest(path):
    operators = [{"name": "patch_runtime_first", "dir": HOSTILE},
                 {"name": "relu_ok", "dir": CPU_OPS},        # known good, and benchmarked
                 {"name": "nan_bad", "dir": CPU_OPS},        # known bad
                 {"name": "transpose_ok", "dir": CPU_OPS},   # known good
                 {"name": "scale_accuracy", "dir": CPU_OPS}]  # known bad
    path.write_text(json.dumps({"name": "trust", "defaults": {"impl_name": "cpu_impl", "lint": False,
                                                             "bench": {"warmup": 2, "repeats": 20}},
                                "operators": operators}))
    return path


def run_batch(batch_bin, manifest, run_dir, env, *flags):
    """One rank, the manifest's order (--schedule fifo): the patcher runs first and every other
    operator after it on the same rank. (Under mpirun the other rank may take them all while the
    patcher's rank is busy with it, and nothing would run after it.)"""
    usage = subprocess.run([batch_bin, "--help"], capture_output=True, text=True, timeout=60).stdout
    order = ["--schedule", "fifo"] if "--schedule" in usage else []  # a build before the cost-aware plan had only that order
    return subprocess.run([batch_bin, str(manifest), "--backend", "cpu", "--run-dir", str(run_dir), "--timeout", "60",
                           "--no-ab", *order, *flags],
                          capture_output=True, text=True, timeout=600, env=env)


def batch_outcome(run_dir):
    """op -> (error types per case, speedups), and the rank each operator ran on, in order."""
    outcome = {}
    for folder in sorted((run_dir / "ops").iterdir()):
        verdict = json.loads((folder / "verify_result.json").read_text())
        perf = folder / "perf_result.json"
        speedups = []
        if perf.exists():
            speedups = [s.get("speedup_vs_torch") for s in json.loads(perf.read_text()).get("per_shape_results", [])]
        outcome[folder.name] = (error_types(verdict), speedups)
    return outcome


def test_an_operator_that_patches_its_process_first_on_a_rank_changes_no_later_verdict(batch_bin, env, tmp_path):
    manifest = batch_manifest(tmp_path / "trust.json")
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, env)
    assert proc.returncode == 1, proc.stderr[-3000:]
    outcome = batch_outcome(run_dir)
    assert outcome["patch_runtime_first"][0] == ["RuntimeTampered"]
    for good in ("relu_ok", "transpose_ok"):
        assert set(outcome[good][0]) == {None}, outcome[good]
    for bad in ("nan_bad", "scale_accuracy"):
        assert None not in outcome[bad][0], outcome[bad]
    speedups = [s for s in outcome["relu_ok"][1] if s is not None]
    assert speedups and all(0.05 < s < 20 for s in speedups), speedups
    # The patcher was the first operator of its rank, and others ran after it on that rank.
    journal = sorted((run_dir / "shards").glob("rank-*.journal"))
    lines = {path.name: [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
             for path in journal}
    ops = {name: [r["case_id"].split("/")[0] for r in records] for name, records in lines.items()}
    ranks_with_patcher = [name for name, order in ops.items() if order and order[0] == "patch_runtime_first"]
    assert ranks_with_patcher and len(set(ops[ranks_with_patcher[0]])) == 5, ops
