"""The adversarial fixtures of jobs/adversarial on the cpu backend: each
games a check that older verifiers lack; each must be caught (its task
file's EXPECTED_ERROR_TYPE) or flagged (EXPECTED_WARNING), and each must slip
through when the check that catches it is turned off (MISSED_WITH), which
shows that check is the one doing the catching. Also the defences' own
pieces: the vault that hides the golden, several seeds, the float64 golden,
the generated edge cases."""
import gc
import json
import os
import subprocess
import sys

import pytest

from test_batch import ROOT, run_batch
from test_lint import task_constants

ADVERSARIAL = os.path.join(ROOT, "jobs", "adversarial")
MANIFEST = os.path.join(ROOT, "jobs", "adversarial_cpu.json")


def constants(op):
    """The module-level constants of a task file, read without importing it."""
    return task_constants(os.path.join(ADVERSARIAL, f"{op}_torch.py"))


def cpu_fixtures():
    return sorted(name[:-len("_cpu_impl.py")] for name in os.listdir(ADVERSARIAL) if name.endswith("_cpu_impl.py"))


def verify(opverify_bin, tmp_path, op, *flags):
    output = tmp_path / f"{op}.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", op, "--verify_dir", ADVERSARIAL,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint",
                           "--output", str(output), *flags], capture_output=True, text=True, timeout=300)
    assert output.exists(), proc.stderr[-3000:]
    return proc.returncode, json.loads(output.read_text())


def all_warnings(result):
    return [w for case in result["opverify"]["cases"] for w in case["warnings"]]


@pytest.fixture(scope="module")
def adversarial_run(tmp_path_factory):
    build = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
    run_dir = tmp_path_factory.mktemp("adversarial") / "run"
    proc = run_batch(os.path.join(build, "runner", "opverify-batch"), MANIFEST, run_dir, "--no-ab")
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return run_dir


def test_the_manifest_covers_every_cpu_fixture(adversarial_run):
    summary = json.loads((adversarial_run / "summary.json").read_text())
    assert sorted(op["name"] for op in summary["operators"]) == cpu_fixtures()


@pytest.mark.parametrize("op", cpu_fixtures())
def test_each_fixture_is_caught(adversarial_run, op):
    expected = constants(op)
    result = json.loads((adversarial_run / "ops" / op / "verify_result.json").read_text())
    if "EXPECTED_ERROR_TYPE" in expected:
        assert result["failed_cases"] >= 1, f"{op}: slipped through"
        assert {f["error_type"] for f in result["failures"]} == {expected["EXPECTED_ERROR_TYPE"]}
    else:
        assert result["failed_cases"] == 0
        assert any(expected["EXPECTED_WARNING"] in w for w in all_warnings(result)), all_warnings(result)


FLAGS_FOR = {("seeds", 1): ["--seeds", "1"], ("golden_precision", "native"): [], ("edge_cases", False): [],
             ("runtime_checks", False): ["--no-runtime-checks"]}


@pytest.mark.parametrize("op", [op for op in cpu_fixtures() if "MISSED_WITH" in constants(op)])
def test_each_fixture_slips_through_with_its_check_off(opverify_bin, tmp_path, op):
    expected = constants(op)
    flags = [flag for item in expected["MISSED_WITH"].items() for flag in FLAGS_FOR[item]]
    code, result = verify(opverify_bin, tmp_path, op, *flags)
    assert code == 0 and result["failed_cases"] == 0, result["failures"]
    if "EXPECTED_WARNING" in expected:
        assert not any(expected["EXPECTED_WARNING"] in w for w in all_warnings(result))


def test_the_vault_hides_objects_from_the_collector_and_gives_them_back():
    import torch
    from opverify_runtime import guard
    golden = torch.full((37, 3), 0.625)
    address = id(golden)
    vault = guard.Vault()
    vault.hide([golden])
    del golden
    gc.collect()
    assert not any(id(o) == address for o in gc.get_objects())
    back = vault.reveal()
    assert len(back) == 1 and id(back[0]) == address and gc.is_tracked(back[0])
    assert float(back[0].sum()) == 0.625 * 111
    assert sys.getrefcount(back[0]) == 3  # the list, the call's argument, nothing left in the vault
    assert len(vault) == 0


def test_a_case_runs_with_three_seeds_by_default_and_one_on_request(opverify_bin, tmp_path):
    _, three = verify(opverify_bin, tmp_path, "memorized", "--seed", "5", "--seeds", "3")
    failed = three["opverify"]["cases"][0]
    assert failed["seeds"] == [6, 7, 5] and failed["seed"] == 6  # the record is the run that failed
    _, one = verify(opverify_bin, tmp_path, "input_blind", "--seed", "5", "--seeds", "1")
    assert one["opverify"]["cases"][0]["seeds"] == [5]


def test_the_fp64_golden_is_recorded_and_an_honest_operator_still_passes(opverify_bin, tmp_path):
    code, sloppy = verify(opverify_bin, tmp_path, "sloppy_sum", "--golden-precision", "fp64")
    assert code == 1 and sloppy["failures"][0]["error_type"] == "AccuracyError"
    assert sloppy["opverify"]["cases"][0]["golden_precision"] == "fp64"
    output = tmp_path / "relu.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", "relu_ok", "--verify_dir",
                           os.path.join(ROOT, "tests", "fixtures", "cpu_ops"), "--triton_impl_name", "cpu_impl",
                           "--backend", "cpu", "--no-lint", "--golden-precision", "fp64", "--output", str(output)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert {c["golden_precision"] for c in json.loads(output.read_text())["opverify"]["cases"]} == {"fp64"}


def test_edge_cases_are_generated_around_each_size_and_labelled(opverify_bin, tmp_path):
    code, result = verify(opverify_bin, tmp_path, "tail_bug", "--edge-cases")
    cases = result["opverify"]["cases"]
    labels = [c.get("edge_case") for c in cases]
    assert labels == [None, None, "n=0", "n=1", "n=1023", "n=1025", "nan_inf"]
    assert {f["edge_case"] for f in result["failures"]} == {"n=1", "n=1023", "n=1025"}
    assert cases[4]["edge_params"] == {"n": 1023}
    assert code == 1


def test_an_edge_case_the_reference_cannot_run_is_reported_not_failed(opverify_bin, tmp_path):
    (tmp_path / "picky_torch.py").write_text(
        "import torch\n\n"
        "class Model(torch.nn.Module):\n"
        "    def forward(self, x):\n"
        "        if x.numel() == 0:\n"
        "            raise ValueError('no empty inputs')\n"
        "        return x + 1\n\n"
        "def get_init_inputs():\n    return []\n\n"
        "def get_inputs(shape=(4, 6)):\n    return [torch.randn(*shape)]\n")
    (tmp_path / "picky_cpu_impl.py").write_text(
        "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return x + 1\n")
    output = tmp_path / "picky.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", "picky", "--verify_dir", str(tmp_path),
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--edge-cases",
                           "--output", str(output)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    cases = json.loads(output.read_text())["opverify"]["cases"]
    labels = [c.get("edge_case") for c in cases]
    assert labels == [None, "shape[0]=0", "shape[0]=1", "shape[0]=3", "shape[0]=5", "shape[1]=0", "shape[1]=1",
                      "shape[1]=3", "shape[1]=4", "shape[1]=5", "nan_inf"]
    empty = [c for c in cases if c.get("edge_case") in ("shape[0]=0", "shape[1]=0")]
    assert all(c["passed"] and "not applicable" in c["warnings"][0] and "no empty inputs" in c["warnings"][0]
               for c in empty)


def cuda_available():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


GPU_MANIFEST = os.path.join(ROOT, "jobs", "adversarial.json")
needs_cuda = pytest.mark.skipif(not cuda_available(), reason="no CUDA device: the Triton fixtures run on the H200")


def gpu_fixtures():
    return sorted(name[:-len("_triton_impl.py")] for name in os.listdir(ADVERSARIAL) if name.endswith("_gpu_triton_impl.py"))


@pytest.fixture(scope="module")
def gpu_run(tmp_path_factory):
    build = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
    run_dir = tmp_path_factory.mktemp("adversarial_gpu") / "run"
    proc = subprocess.run([os.path.join(build, "runner", "opverify-batch"), GPU_MANIFEST, "--backend", "cuda",
                           "--run-dir", str(run_dir), "--no-ab"], capture_output=True, text=True, timeout=1200)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    return run_dir


@needs_cuda
@pytest.mark.parametrize("op", gpu_fixtures())
def test_each_gpu_fixture_is_caught(gpu_run, op):
    expected = constants(op)
    result = json.loads((gpu_run / "ops" / op / "verify_result.json").read_text())
    if "EXPECTED_ERROR_TYPE" in expected:
        assert result["failed_cases"] == result["total_cases"] >= 1, f"{op}: slipped through: {result['failures']}"
        types = {f["error_type"] for f in result["failures"]}
        if "ALSO_ACCEPTED" in expected:  # the expected type on some case, these on the others
            assert expected["EXPECTED_ERROR_TYPE"] in types, result["failures"]
            assert types <= {expected["EXPECTED_ERROR_TYPE"], *expected["ALSO_ACCEPTED"]}, result["failures"]
        else:
            assert types == {expected["EXPECTED_ERROR_TYPE"]}, result["failures"]
        if "EXPECTED_REGRESSION_TYPE" in expected:
            assert {f.get("regression_type") for f in result["failures"]} == {expected["EXPECTED_REGRESSION_TYPE"]}
    else:
        assert result["failed_cases"] == 0, result["failures"]
        summary = json.loads((gpu_run / "summary.json").read_text())
        assert any(expected["EXPECTED_REVIEW"] in r and op in r for r in summary["performance"]["review"]), \
            summary["performance"]["review"]


@needs_cuda
def test_ghost_replay_is_what_catches_numpy_side(opverify_bin, tmp_path):
    output = tmp_path / "numpy_side.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", "numpy_side_gpu", "--verify_dir", ADVERSARIAL,
                           "--triton_impl_name", "triton_impl", "--backend", "cuda", "--output", str(output)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    evidence = json.loads(output.read_text())["opverify"]["cases"][0]["runtime_evidence"]
    assert evidence["own_kernels"] == ["_relu_kernel"] and "_relu_kernel" in evidence["kernels"]


@needs_cuda
def test_ghost_stop_keeps_a_real_triton_launch_from_running(monkeypatch):
    """The ghost replay's launch hook stops an own launch that its no-ops miss. The claim it
    rests on, checked on real Triton: the launcher calls the launch-enter hook before it
    launches, and launches nothing when the hook raises. The replay is kept from patching any
    launcher class here, and the kernel is known by name only, so its launch goes through
    Triton's own path untouched up to the hook."""
    import torch
    import triton
    import triton.language as tl
    from opverify_runtime import ghost

    @triton.jit
    def _ghost_fill_kernel(out_ptr, n, BLOCK: tl.constexpr):
        offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out_ptr + offsets, 7.0, mask=offsets < n)

    out = torch.zeros(256, device="cuda")
    _ghost_fill_kernel[(1,)](out, 256, BLOCK=256)  # compiles; the kernel works
    torch.cuda.synchronize()
    assert out.eq(7).all()
    out.zero_()
    monkeypatch.setattr(ghost, "launcher_classes", lambda jit_functions=(): [])
    with ghost.ghost_kernels({}, (), {"_ghost_fill_kernel"}) as replay:
        with pytest.raises(ghost.GhostStop):
            _ghost_fill_kernel[(1,)](out, 256, BLOCK=256)
        torch.cuda.synchronize()
    assert (replay.skipped, replay.stopped) == (0, ["_ghost_fill_kernel"])
    assert out.eq(0).all(), "the launch ran although the hook raised"
    _ghost_fill_kernel[(1,)](out, 256, BLOCK=256)  # launches again once the replay is over
    torch.cuda.synchronize()
    assert out.eq(7).all()


def test_edge_cases_in_a_sweep_get_stable_ids_and_resume_does_not_run_them_again(tmp_path):
    import h5py
    build = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
    batch = os.path.join(build, "runner", "opverify-batch")
    manifest = tmp_path / "edges.json"
    manifest.write_text(json.dumps({"name": "edges", "defaults": {"impl_name": "cpu_impl", "lint": False, "seeds": 1,
                                                                  "bench": {"enabled": False}},
                                    "operators": [{"name": "tail_bug", "dir": ADVERSARIAL, "edge_cases": True,
                                                   "sweep": {"n": [1024, 4096]}}]}))

    def rows(run_dir):
        with h5py.File(run_dir / "results.h5", "r") as f:
            ids = [r["case_id"].decode() if isinstance(r["case_id"], bytes) else r["case_id"]
                   for r in f["cases"][:] if r["case_index"] >= 0]
        return sorted(ids)

    run_dir = tmp_path / "run"
    assert run_batch(batch, manifest, run_dir, "--no-ab").returncode == 1
    first = rows(run_dir)
    assert first == sorted(['tail_bug/{"n":1024}', 'tail_bug/{"n":4096}', "tail_bug/edge/n=0", "tail_bug/edge/n=1",
                            "tail_bug/edge/n=1023", "tail_bug/edge/n=1025", "tail_bug/edge/nan_inf"])
    assert run_batch(batch, manifest, run_dir, "--no-ab", "--resume").returncode == 1
    assert rows(run_dir) == first  # nothing ran twice
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["totals"]["cases"] == 7 and summary["totals"]["failed"] == 3


def test_the_dispatch_trace_tells_device_compute_from_data_movement():
    import torch
    from opverify_runtime import runtime_evidence
    trace = runtime_evidence.DispatchTrace(torch)
    with trace:
        x = torch.randn(4, 4)
        y = x.t().contiguous().view(-1)
        torch.view_as_real(torch.zeros(2, dtype=torch.complex64))
        (y * 2).sum()
    assert {"randn", "t", "clone", "view", "view_as_real", "mul", "sum"} <= set(trace.ops)
    assert trace.ops["mul"][1] == {"cpu"}
    # On the cpu only: host arithmetic is not the operator's device work.
    assert trace.compute_ops() == {}
    trace.ops["mm"] = [1, {"cuda"}]
    trace.ops["empty"] = [2, {"cuda"}]
    assert set(trace.compute_ops()) == {"mm"}
    verdict = runtime_evidence.judge_evidence(trace, None, {})
    assert verdict[0] == 3 and "aten::mm (1x on cuda)" in verdict[1]


def test_runtime_evidence_wants_the_files_own_kernels_doing_the_work():
    import torch
    from opverify_runtime import runtime_evidence
    trace = runtime_evidence.DispatchTrace(torch)  # nothing dispatched
    own = {"_relu_kernel": object()}
    assert runtime_evidence.judge_evidence(trace, {"_relu_kernel": (1, 2.0)}, own) is None
    assert runtime_evidence.judge_evidence(
        trace, {"_relu_kernel": (1, 2.0), "void at::native::vectorized_elementwise_kernel<FillFunctor>": (1, 9.0)},
        own) is None  # torch's own fills and copies do not count against it
    missing = runtime_evidence.judge_evidence(trace, {"relu_kernel": (1, 2.0)}, own)
    assert missing[0] == 2 and "relu_kernel" in missing[1]
    outweighed = runtime_evidence.judge_evidence(trace, {"_relu_kernel": (1, 1.0), "helper_kernel": (1, 5.0)}, own)
    assert outweighed[0] == 3 and "helper_kernel" in outweighed[1]
