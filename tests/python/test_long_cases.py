"""Long cases for real: a stop signal while every rank is inside a case that
sleeps for ten minutes (mpirun -np 2, and a single rank), the warm-up
allowance that keeps compilation out of a case's timeout (the compile clock's
events, through a stand-in of Triton's JIT hooks), and --cache-dir's
persistent per-rank compiler caches. Real executors, real mpirun, real files."""
import fcntl
import json
import os
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

import h5py

from conftest import processes_marked

from test_batch import CPU_OPS, MPI_ENV, batch_bin, run_batch, write_manifest  # noqa: F401 (fixture)

STOP_WITHIN_S = 30


def journaled(run_dir):
    """Every case id stored in the run, from the ranks' journals."""
    ids = []
    for journal in sorted((run_dir / "shards").glob("rank-*.journal")):
        ids += [json.loads(line)["case_id"] for line in journal.read_text().splitlines() if line.strip()]
    return ids


def executors_of(run_dir):
    """Pids of opverify-executor processes started for this run (their cache lies in it)."""
    return [pid for pid, command in processes_marked(str(run_dir)) if "opverify-executor" in command.split(" ")[0]]


def wait_for(predicate, timeout_s, what):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout_s} s waiting for {what}")


def sleeping(run_dir, rank):
    log = run_dir / "logs" / f"rank-{rank:04d}.executor.log"
    return log.exists() and "sleep_long: sleeping" in log.read_text(errors="replace")


def long_manifest(path, sleepers):
    """Quick operators first, then `sleepers` (each a sweep n=1..3 whose n=2 sleeps 10 minutes), then one
    more quick operator that no rank reaches before the stop."""
    ops = [{"name": "relu_ok", "dir": CPU_OPS}, {"name": "transpose_ok", "dir": CPU_OPS}]
    ops += [{"name": "sleep_long", "dir": str(d), "sweep": {"n": [1, 2, 3]}, "timeout_s": 1200} for d in sleepers]
    ops += [{"name": "quant_ok", "dir": CPU_OPS}]
    # Two operators of one name cannot be in one job: each sleeper is a copy in a folder of its own.
    for i, op in enumerate(ops):
        if op["name"] == "sleep_long":
            op["name"] = f"sleep_long_{i}"
    path.write_text(json.dumps({"name": path.stem, "defaults": {"impl_name": "cpu_impl", "lint": False},
                                "operators": ops}))
    return path


def sleeper_folders(tmp_path, count):
    folders = []
    for i in range(count):
        folder = tmp_path / f"sleepers{i}"
        folder.mkdir()
        name = f"sleep_long_{i + 2}"
        for suffix in ("_torch.py", "_cpu_impl.py"):
            (folder / (name + suffix)).write_text((open(os.path.join(CPU_OPS, "sleep_long" + suffix)).read()))
        folders.append(folder)
    return folders


def assert_complete_partial_reports(run_dir, signame, finished):
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["stopped_by_signal"] == signame
    # Cases, not operator facts (op/@operator/N) or benchmarks (op/#N@bench, op/@bench-item/N).
    stored = [c for c in journaled(run_dir) if "/@" not in c and not c.endswith("@bench")]
    assert summary["totals"]["cases"] == len(stored), (summary["totals"], stored)
    assert summary["totals"]["failed"] == 0, summary["failures"]  # nothing abandoned is a failure
    for op in finished:
        verify = json.loads((run_dir / "ops" / op / "verify_result.json").read_text())
        assert verify["passed_cases"] == verify["total_cases"] > 0
    junit = ET.parse(run_dir / "junit.xml").getroot()
    assert sum(1 for _ in junit.iter("testcase")) >= len(stored)
    report = (run_dir / "report.md").read_text()
    assert "Stopped early" in report and signame in report and "--resume" in report
    assert (run_dir / "report.html").exists()
    return summary, stored


def stop_inside_long_cases(command, run_dir, ranks, signum):
    """Starts `command`, sends `signum` once every rank's executor is inside its sleeping case, and checks
    that the run ended within STOP_WITHIN_S, exit 1, with no executor left. Returns the journal before the signal."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=dict(os.environ, **MPI_ENV))
    try:
        wait_for(lambda: all(sleeping(run_dir, r) for r in range(ranks)), 240, "every rank inside a sleeping case")
        before = set(journaled(run_dir))
        proc.send_signal(signum)
        started = time.monotonic()
        _, err = proc.communicate(timeout=STOP_WITHIN_S)
        took = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
    assert took < STOP_WITHIN_S, f"{took:.1f} s"
    assert proc.returncode == 1, err[-3000:]
    assert not executors_of(run_dir), "an executor outlived the run"
    return before


def test_sigusr1_under_mpirun_with_both_ranks_inside_ten_minute_cases(batch_bin, tmp_path):
    manifest = long_manifest(tmp_path / "long.json", sleeper_folders(tmp_path, 2))
    run_dir = tmp_path / "run"
    command = ["mpirun", "-np", "2", "--oversubscribe", batch_bin, str(manifest), "--backend", "cpu",
               "--run-dir", str(run_dir), "--no-bench", "--schedule", "fifo"]  # the manifest's order
    before = stop_inside_long_cases(command, run_dir, 2, signal.SIGUSR1)  # mpirun forwards it to every rank
    summary, stored = assert_complete_partial_reports(run_dir, "SIGUSR1", ["relu_ok", "transpose_ok"])
    # The sleeping cases were abandoned, not stored, and not failures.
    assert set(journaled(run_dir)) >= before
    for op in ("sleep_long_2", "sleep_long_3"):  # n=1 ran; n=2 was abandoned
        assert sum(c.startswith(op + "/") for c in stored) == 1, stored
    # --resume runs exactly what was not stored: the abandoned cases, the rest of their sweeps, quant_ok.
    resumed = run_batch(batch_bin, manifest, run_dir, "--resume", "--no-bench", ranks=2,
                        env={"OPVERIFY_TEST_NO_SLEEP": "1"})
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    added_cases = [c for c in journaled(run_dir) if c not in stored and "/@" not in c]
    quant_cases = json.loads((run_dir / "ops" / "quant_ok" / "verify_result.json").read_text())["total_cases"]
    assert sorted(c.split("/")[0] for c in added_cases) == (
        ["quant_ok"] * quant_cases + ["sleep_long_2"] * 2 + ["sleep_long_3"] * 2), added_cases
    final = json.loads((run_dir / "summary.json").read_text())
    assert "stopped_by_signal" not in final
    assert final["totals"]["cases"] == len(stored) + len(added_cases)
    assert final["totals"]["failed"] == 0
    expected_ops = {"relu_ok", "transpose_ok", "sleep_long_2", "sleep_long_3", "quant_ok"}
    assert {p.name for p in (run_dir / "ops").iterdir()} == expected_ops
    for op in ("sleep_long_2", "sleep_long_3"):
        verify = json.loads((run_dir / "ops" / op / "verify_result.json").read_text())
        assert verify["total_cases"] == verify["passed_cases"] == 3


def test_sigterm_to_a_single_rank_inside_a_ten_minute_case(batch_bin, tmp_path):
    manifest = long_manifest(tmp_path / "long.json", sleeper_folders(tmp_path, 1))
    run_dir = tmp_path / "run"
    stop_inside_long_cases([batch_bin, str(manifest), "--backend", "cpu", "--run-dir", str(run_dir), "--no-bench",
                            "--schedule", "fifo"], run_dir, 1, signal.SIGTERM)  # the manifest's order
    _, stored = assert_complete_partial_reports(run_dir, "SIGTERM", ["relu_ok", "transpose_ok"])
    assert sum(c.startswith("sleep_long_2/") for c in stored) == 1  # n=1 ran; n=2 was abandoned
    resumed = run_batch(batch_bin, manifest, run_dir, "--resume", "--no-bench", env={"OPVERIFY_TEST_NO_SLEEP": "1"})
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    added = [c for c in journaled(run_dir) if c not in stored and "/@" not in c]
    quant_cases = json.loads((run_dir / "ops" / "quant_ok" / "verify_result.json").read_text())["total_cases"]
    # Exactly what was not stored: the abandoned n=2, n=3 after it, and quant_ok, never started.
    assert sorted(c.split("/")[0] for c in added) == ["quant_ok"] * quant_cases + ["sleep_long_2"] * 2, added
    final = json.loads((run_dir / "summary.json").read_text())
    assert final["totals"]["failed"] == 0 and "stopped_by_signal" not in final


def verify(opverify_bin, tmp_path, op, *flags):
    output = tmp_path / f"{op}.json"
    started = time.monotonic()
    proc = subprocess.run([opverify_bin, "verify", "--op_name", op, "--verify_dir", CPU_OPS, "--triton_impl_name",
                           "cpu_impl", "--backend", "cpu", "--no-lint", "--seeds", "1", "--output", str(output),
                           *flags], capture_output=True, text=True, timeout=300)
    return proc, json.loads(output.read_text()), time.monotonic() - started


# warmup_slow compiles for 30 s on its first launch; the case itself needs a second, or several on a
# loaded 2-core machine: the case limit leaves it 20 s.
def test_a_long_compilation_is_not_a_timeout_within_the_warmup_allowance(opverify_bin, tmp_path):
    proc, result, _ = verify(opverify_bin, tmp_path, "warmup_slow", "--timeout", "20", "--warmup-timeout", "60")
    assert proc.returncode == 0, json.dumps(result["failures"])[:2000]
    assert result["passed_cases"] == 1


def test_without_an_allowance_the_same_compilation_times_out(opverify_bin, tmp_path):
    proc, result, _ = verify(opverify_bin, tmp_path, "warmup_slow", "--timeout", "20", "--warmup-timeout", "0")
    assert proc.returncode == 1
    assert [f["error_type"] for f in result["failures"]] == ["Timeout"]


def test_a_warmup_that_never_ends_times_out_once_the_allowance_is_spent(opverify_bin, tmp_path):
    proc, result, took = verify(opverify_bin, tmp_path, "warmup_forever", "--timeout", "8", "--warmup-timeout", "5")
    assert proc.returncode == 1
    (failure,) = result["failures"]
    assert failure["error_type"] == "Timeout"
    assert "whole warm-up allowance" in failure["error_msg"], failure["error_msg"][:500]
    assert 13 <= took < 90, took  # timeout + allowance, then the executor is killed


def test_a_hang_outside_any_warmup_still_times_out_at_the_case_limit(opverify_bin, tmp_path):
    proc, result, took = verify(opverify_bin, tmp_path, "hang", "--timeout", "8", "--warmup-timeout", "600")
    assert [f["error_type"] for f in result["failures"]] == ["Timeout"]
    assert took < 60, took


def test_verify_cache_dir_is_the_executors_cache(opverify_bin, tmp_path):
    cache = tmp_path / "cache"
    proc, result, _ = verify(opverify_bin, tmp_path, "relu_ok", "--cache-dir", str(cache))
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert result["environment"]["cache"]["dir"] == str(cache / "triton")
    assert result["environment"]["cache"]["inductor_dir"] == str(cache / "inductor")


def test_cache_dir_gives_each_rank_its_own_persistent_folder(batch_bin, tmp_path):
    cache = tmp_path / "nightly-cache"
    manifest = write_manifest(tmp_path / "two.json", ["relu_ok", "transpose_ok", "quant_ok", "4_abs"])
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "--no-bench", "--cache-dir", str(cache), ranks=2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["compiler_cache"] == {"persistent": True, "dir": str(cache)}
    ranks_used = set()
    for op in ("relu_ok", "transpose_ok", "quant_ok", "4_abs"):
        environment = json.loads((run_dir / "ops" / op / "verify_result.json").read_text())["environment"]
        directory = environment["cache"]["dir"]
        assert os.path.dirname(os.path.dirname(directory)) == str(cache) and directory.endswith("/triton"), directory
        ranks_used.add(os.path.basename(os.path.dirname(directory)))
        assert environment["cache"]["inductor_dir"] == directory[:-len("triton")] + "inductor"
    assert ranks_used <= {"rank-0000", "rank-0001"}
    assert sorted(p.name for p in cache.iterdir() if p.is_dir()) == ["rank-0000", "rank-0001"]
    # Without --cache-dir, each run starts cold in its own folder.
    cold = run_batch(batch_bin, manifest, tmp_path / "cold", "--no-bench")
    assert json.loads((tmp_path / "cold" / "summary.json").read_text())["compiler_cache"]["persistent"] is False
    assert cold.returncode == 0


def test_a_cache_folder_another_run_holds_is_not_shared(batch_bin, tmp_path):
    cache = tmp_path / "nightly-cache"
    cache.mkdir()
    with open(cache / "rank-0000.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as another run's rank 0 would
        proc = run_batch(batch_bin, write_manifest(tmp_path / "one.json", ["relu_ok"]), tmp_path / "run",
                         "--no-bench", "--cache-dir", str(cache))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "in use by another run" in proc.stderr
    environment = json.loads((tmp_path / "run" / "ops" / "relu_ok" / "verify_result.json").read_text())["environment"]
    assert environment["cache"]["dir"].startswith(str(tmp_path / "run" / "cache"))


def test_ab_keeps_a_fresh_cache_beside_a_persistent_one(batch_bin, tmp_path):
    # A stale "compiled kernel" sits in the persistent cache of rank 0: the
    # original run and the same-cache rerun read it, the fresh one must not.
    cache = tmp_path / "nightly-cache"
    (cache / "rank-0000" / "triton").mkdir(parents=True)
    (cache / "rank-0000" / "triton" / "fixture_kernel.json").write_text(json.dumps({"scale": 2.5}))
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, write_manifest(tmp_path / "ab.json", ["ab_cache_suspect"]), run_dir,
                     "--no-bench", "--cache-dir", str(cache))
    assert proc.returncode == 1, proc.stderr[-3000:]
    with h5py.File(run_dir / "shards" / "rank-0000.h5", "r") as f:
        (ab,) = [json.loads(f["cases"][n].attrs["ab"]) for n in f["cases"] if f["cases"][n].attrs["case_index"] >= 0]
    assert ab["classification"] == "compiler_suspect"
    assert ab["fresh_effective"] is True
    fresh = [a for a in ab["attempts"] if a["label"] == "fresh_cache"][0]["cache_dir"]
    assert fresh.startswith(str(run_dir / "cache" / "rank-0000" / "ab")), fresh
    assert [a for a in ab["attempts"] if a["label"] == "original"][0]["cache_dir"].startswith(str(cache))
