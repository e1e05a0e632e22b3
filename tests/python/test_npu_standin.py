"""The npu backend end to end, through the stand-in of tests/support/npu_standin
(torch_npu mapped onto CUDA, npu-smi reading the GPU's clock, the driver's
clock-lock tool recording its call). Skipped where torch sees no CUDA device;
run for real on the H200 through the device tool.

What runs for real: `--backend npu` in verify, bench and opverify-batch; the
rank's device binding through ASCEND_RT_VISIBLE_DEVICES; the environment's
cann, npu_name and torch_npu sections; npu-smi clock sampling and the
set_lp_idle lock; and the classification of a device error raised with
torch_npu's text.
"""
import json
import os
import subprocess

import pytest

from test_lint import task_constants

torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device: the npu stand-in maps onto CUDA and runs on the H200", allow_module_level=True)

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
JOBS = os.path.join(ROOT, "jobs")
STANDIN = os.path.abspath(os.path.join(ROOT, "tests", "support", "npu_standin"))
CANN_VERSION = "8.0.RC3.standin"


@pytest.fixture
def npu_env(tmp_path):
    home = tmp_path / "ascend-toolkit"
    info = home / f"{os.uname().machine}-linux" / "ascend_toolkit_install.info"
    info.parent.mkdir(parents=True)
    info.write_text(f"package_name=Ascend-cann-toolkit\nversion={CANN_VERSION}\n")
    env = dict(os.environ, ASCEND_HOME_PATH=str(home), OPVERIFY_NPU_STANDIN_LOG=str(tmp_path / "standin.log"),
               PATH=os.path.join(STANDIN, "bin") + os.pathsep + os.environ.get("PATH", ""),
               PYTHONPATH=STANDIN + os.pathsep + os.environ.get("PYTHONPATH", ""),
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    env.pop("CUDA_VISIBLE_DEVICES", None)
    env.pop("ASCEND_RT_VISIBLE_DEVICES", None)
    return env


def verify(opverify_bin, env, tmp_path, folder, op, timeout_s=300):
    output = tmp_path / f"{op}.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", op, "--verify_dir", os.path.join(JOBS, folder),
                           "--triton_impl_name", "triton_impl", "--backend", "npu", "--timeout", str(timeout_s),
                           "--output", str(output)], capture_output=True, text=True, timeout=900, env=env)
    assert output.exists(), proc.stderr[-3000:]
    return proc, json.loads(output.read_text())


def test_verify_runs_on_the_npu_backend_with_its_environment(opverify_bin, npu_env, tmp_path):
    npu_env["ASCEND_RT_VISIBLE_DEVICES"] = "0"
    proc, result = verify(opverify_bin, npu_env, tmp_path, "ops", "softmax")
    assert proc.returncode == 0, json.dumps(result["failures"], indent=1)[:3000]
    assert result["passed_cases"] == result["total_cases"] > 0
    environment = result["environment"]
    device = environment["device"]
    assert device["backend"] == "npu"
    assert "standin" in device["npu_name"] and device["npu_name"] == device["name"]
    assert device["ASCEND_RT_VISIBLE_DEVICES"] == "0"
    assert device["compute_unit"] == "AI cores" and device["compute_units"] > 0
    assert environment["cann"]["version"] == CANN_VERSION
    assert environment["torch"]["torch_npu_version"].endswith("standin")


def test_a_device_error_with_torch_npus_text_is_a_device_error(opverify_bin, npu_env, tmp_path):
    expected = task_constants(os.path.join(JOBS, "defects", "oob_access_torch.py"))["EXPECTED_ERROR_TYPE"]
    proc, result = verify(opverify_bin, npu_env, tmp_path, "defects", "oob_access", timeout_s=60)
    assert proc.returncode == 1
    errors = {failure["error_type"] for failure in result["failures"]}
    assert errors == {expected}, json.dumps(result["failures"], indent=1)[:3000]


def test_bench_samples_npu_smi_and_locks_with_set_lp_idle(opverify_bin, npu_env, tmp_path):
    npu_env["ASCEND_RT_VISIBLE_DEVICES"] = "0"
    folder = tmp_path / "op"
    folder.mkdir()
    for name in ("softmax_torch.py", "softmax_triton_impl.py"):
        (folder / name).write_text(open(os.path.join(JOBS, "ops", name)).read())
    output = tmp_path / "perf.json"
    proc = subprocess.run([opverify_bin, "bench", "--op_name", "softmax", "--verify_dir", str(folder),
                           "--triton_impl_name", "triton_impl", "--backend", "npu", "--verify_not_required",
                           "--lock-frequency", "--freq-check-interval", "0.2", "--warmup", "3", "--repeats", "20",
                           "--output", str(output)], capture_output=True, text=True, timeout=900, env=npu_env)
    assert output.exists(), proc.stderr[-3000:]
    perf = json.loads(output.read_text())
    clock = perf["opverify"]["clock"]
    assert clock["source"] == "npu-smi" and clock["device"] == "0", clock
    assert clock["samples"] > 0 and clock["max_mhz"] > 0, clock
    assert (tmp_path / "standin.log").read_text().splitlines() == ["drv_hlt_dsmi_test set_lp_idle 0 0"]
    assert perf["environment"]["device"]["backend"] == "npu"


def test_batch_binds_each_rank_through_ascend_rt_visible_devices(npu_env, tmp_path):
    build = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
    npu_env["ASCEND_RT_VISIBLE_DEVICES"] = "0,0"  # one GPU here: both ranks get device 0 of a two-item list
    run_dir = tmp_path / "run"
    proc = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", "-x", "ASCEND_RT_VISIBLE_DEVICES",
                           "-x", "PYTHONPATH", "-x", "PATH", "-x", "ASCEND_HOME_PATH",
                           os.path.join(build, "runner", "opverify-batch"), os.path.join(JOBS, "smoke.json"),
                           "--backend", "npu", "--run-dir", str(run_dir), "--no-bench"],
                          capture_output=True, text=True, timeout=900, env=npu_env)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["ranks"] == 2 and summary["backend"] == "npu"
    assert summary["totals"]["failed"] == 0 and summary["totals"]["passed"] > 0, summary["totals"]
    for rank in (0, 1):
        log = (run_dir / "logs" / f"rank-{rank:04d}.log").read_text()
        assert "ASCEND_RT_VISIBLE_DEVICES=0" in log, log[:2000]
    for result_file in run_dir.glob("ops/*/verify_result.json"):
        device = json.loads(result_file.read_text())["environment"]["device"]
        assert device["backend"] == "npu" and device["ASCEND_RT_VISIBLE_DEVICES"] == "0", result_file
