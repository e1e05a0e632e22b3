"""opverify-batch for real: mpirun with 1, 2 and 3 ranks on the cpu backend
(oversubscribed on this machine's cores), SIGKILL and --resume, the A/B
re-run of accuracy failures, and bad manifests. Results are read back from
the run folder: summary.json, verify_result.json and the HDF5 store."""
import json
import math
import os
import re
import shutil
import signal
import subprocess
import time

import h5py
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CPU_OPS = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}


@pytest.fixture(scope="session")
def batch_bin():
    build = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
    path = os.path.join(build, "runner", "opverify-batch")
    assert os.access(path, os.X_OK), path
    return path


def run_batch(batch_bin, manifest, run_dir, *flags, ranks=None, timeout=600, env=None):
    command = [batch_bin, str(manifest), "--backend", "cpu", "--run-dir", str(run_dir), *flags]
    if ranks:
        command = ["mpirun", "-np", str(ranks), "--oversubscribe", *command]
        command[4:4] = [arg for name in (env or {}) for arg in ("-x", name)]  # mpirun passes them on
    env = dict(os.environ, **MPI_ENV, **(env or {}))
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=env)


def verdicts(run_dir):
    """case_id -> (passed, error_type), from the HDF5 store via results.h5."""
    out = {}
    with h5py.File(os.path.join(run_dir, "results.h5"), "r") as f:
        for row in f["cases"][:]:
            case_id = row["case_id"].decode() if isinstance(row["case_id"], bytes) else row["case_id"]
            if row["kind"] != b"case":  # operator facts and benchmark rows
                continue
            error = row["error_type"].decode() if isinstance(row["error_type"], bytes) else row["error_type"]
            out[case_id] = (bool(row["passed"]), error)
    return out


def write_manifest(path, operators, **defaults):
    defaults.setdefault("impl_name", "cpu_impl")
    defaults.setdefault("lint", False)
    path.write_text(json.dumps({"name": path.stem, "defaults": defaults,
                                "operators": [{"name": op, "dir": CPU_OPS} for op in operators]}))
    return path


MIXED = ["relu_ok", "quant_ok", "transpose_ok", "scale_accuracy", "nan_bad", "crash_second_case", "runtime_bad"]


@pytest.fixture(scope="module")
def single_rank_run(batch_bin, tmp_path_factory):
    folder = tmp_path_factory.mktemp("single")
    manifest = write_manifest(folder / "mixed.json", MIXED)
    proc = run_batch(batch_bin, manifest, folder / "run", "--no-ab")
    return folder / "run", proc


def test_single_rank_without_mpirun(single_rank_run):
    run_dir, proc = single_rank_run
    assert proc.returncode == 1, proc.stderr[-3000:]  # some fixtures fail by design
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["ranks"] == 1 and summary["launcher"] == "none"
    assert summary["totals"]["operators"] == len(MIXED)
    v = verdicts(run_dir)
    assert v["relu_ok/#1"] == (True, "")
    assert v["crash_second_case/#2"] == (False, "Crash")
    assert v["crash_second_case/#3"] == (True, "")
    assert v["scale_accuracy/#1"] == (False, "AccuracyError")
    # report.md: the eco message's "|golden|" is escaped and the row keeps the header's columns
    # (GFM splits a row at each pipe no backslash escapes).
    md = (run_dir / "report.md").read_text()
    header = md.index("| case | error | A/B | message |")
    (row,) = [line for line in md[header:].splitlines() if line.startswith("| scale_accuracy/#1 |")]
    assert "\\|golden\\|" in row, row
    assert len(re.split(r"(?<!\\)\|", row)) == len(re.split(r"(?<!\\)\|", md[header:].splitlines()[0])), row
    # One numbering: case #2 of the store is case_idx 2 of verify_result.json.
    crash = json.loads((run_dir / "ops" / "crash_second_case" / "verify_result.json").read_text())
    assert [f["case_idx"] for f in crash["failures"]] == [2]
    seed = json.loads((run_dir / "ops" / "nan_bad" / "verify_result.json").read_text())
    assert list(seed)[:6] == ["op_name", "total_cases", "passed_cases", "failed_cases", "failures", "environment"]
    assert seed["failures"][0]["error_type"] == "NaNMismatch"
    assert (run_dir / "logs" / "rank-0000.log").exists()


@pytest.mark.parametrize("ranks", [1, 2, 3])
def test_mpirun_ranks_give_the_same_verdicts(batch_bin, tmp_path, single_rank_run, ranks):
    manifest = write_manifest(tmp_path / "mixed.json", MIXED)
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--no-ab", ranks=ranks)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert verdicts(tmp_path / "run") == verdicts(single_rank_run[0])
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["ranks"] == ranks and summary["launcher"] == "mpirun"
    with h5py.File(tmp_path / "run" / "results.h5", "r") as f:
        used = {int(r) for r in f["cases"]["rank"][:]}
    if ranks > 1:
        assert len(used) > 1, "work was not spread over the ranks"
    for r in range(ranks):
        assert (tmp_path / "run" / "logs" / f"rank-{r:04d}.log").exists()


def test_a_rank_that_cannot_work_leaves_and_the_others_finish_the_night(batch_bin, tmp_path, single_rank_run):
    """Rank 1 alone cannot make its folder in the run (a file stands where its
    cache/rank-0001 goes): it says so and leaves; ranks 0 and 2 run every item,
    rank 0 writes every report, names the rank and exits 2. It used to wait for
    rank 1 for ever (and mpirun with it): the timeout fails the test then."""
    manifest = write_manifest(tmp_path / "mixed.json", MIXED)
    run_dir = tmp_path / "run"
    (run_dir / "cache").mkdir(parents=True)
    (run_dir / "cache" / "rank-0001").write_text("not a folder")
    proc = run_batch(batch_bin, manifest, run_dir, "--no-ab", ranks=3, timeout=300)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert "rank 1 left the run" in proc.stderr and "rank-0001" in proc.stderr, proc.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    left = summary["ranks_left"]
    assert [(r["rank"], r["lost_item"]) for r in left] == [(1, None)], left
    assert "cannot create" in left[0]["reason"] and "rank-0001" in left[0]["reason"], left
    assert summary["unassigned_items"] == 0
    # Nothing was lost: the two that stayed ran everything, as one rank does.
    assert verdicts(run_dir) == verdicts(single_rank_run[0])
    with h5py.File(run_dir / "results.h5", "r") as f:
        assert {int(r) for r in f["cases"]["rank"][:]} <= {0, 2}
    assert (run_dir / "junit.xml").exists() and (run_dir / "report.html").exists()
    assert "1 rank left the run early" in proc.stdout, proc.stdout[-2000:]
    report = (run_dir / "report.md").read_text()
    assert "1 rank left the run early" in report and "rank 1 left: " in report, report[:3000]
    # A re-reduce of the same folder keeps what the batch recorded.
    reduced = subprocess.run([os.path.join(os.path.dirname(batch_bin), "..", "reduce", "opverify-reduce"),
                              str(run_dir)], capture_output=True, text=True, timeout=300)
    assert json.loads((run_dir / "summary.json").read_text())["ranks_left"] == left, reduced.stderr[-2000:]


def start_mixed_run(batch_bin, tmp_path, stored):
    """A single-rank run of MIXED, once `stored` cases are journaled: (process, manifest, run folder, journal)."""
    manifest = write_manifest(tmp_path / "mixed.json", MIXED)
    run_dir = tmp_path / "run"
    env = dict(os.environ, **MPI_ENV)
    proc = subprocess.Popen([batch_bin, str(manifest), "--backend", "cpu", "--run-dir", str(run_dir), "--no-ab"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    journal = run_dir / "shards" / "rank-0000.journal"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if journal.exists() and journal.read_text().count("\n") >= stored:
            break
        time.sleep(0.02)
    return proc, manifest, run_dir, journal


def test_sigkill_then_resume_finishes_with_the_same_results(batch_bin, tmp_path, single_rank_run):
    proc, manifest, run_dir, journal = start_mixed_run(batch_bin, tmp_path, 3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    stored = journal.read_text().count("\n")
    assert stored >= 3
    resumed = run_batch(batch_bin, manifest, run_dir, "--no-ab", "--resume")
    assert resumed.returncode == 1, resumed.stderr[-3000:]
    assert verdicts(run_dir) == verdicts(single_rank_run[0])
    # Every operator that passed is benchmarked, whether it was verified
    # before the kill or after: each shape once.
    for op in ("relu_ok", "quant_ok", "transpose_ok"):
        perf = json.loads((run_dir / "ops" / op / "perf_result.json").read_text())
        verify = json.loads((run_dir / "ops" / op / "verify_result.json").read_text())
        assert perf["total_cases"] == verify["total_cases"], perf["opverify"]["warnings"]
    assert len(list((run_dir / "shards").glob("rank-0000*.h5"))) == 2  # resume wrote a new shard


def descendants(pid):
    """pid and every process below it, parents first."""
    children = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as f:
                parent = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError):
            continue
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        found.append(todo.pop(0))
        todo += children.get(found[-1], [])
    return found


def test_a_stop_that_reaches_the_executors_stores_no_crash(batch_bin, tmp_path, single_rank_run):
    # Slurm stops a job (scancel, a requeue, the time limit) by signalling
    # every process of it: the rank's executors die of SIGTERM too, here a
    # moment before the rank hears it. The case or benchmark shape an executor
    # was running is not the operator's crash: it is not stored, and --resume
    # runs it.
    proc, manifest, run_dir, _ = start_mixed_run(batch_bin, tmp_path, 1)
    executors = descendants(proc.pid)[1:]
    assert executors, "no executor running"
    for pid in executors:
        os.kill(pid, signal.SIGTERM)
    time.sleep(0.05)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=120) == 1
    assert json.loads((run_dir / "summary.json").read_text())["stopped_by_signal"] == "SIGTERM"
    with h5py.File(run_dir / "results.h5", "r") as f:
        stored = {(r["case_id"].decode(), r["error_type"].decode()) for r in f["cases"][:]}
    assert not {c for c in stored if c[1] == "Crash" and not c[0].startswith("crash_second_case/")}, stored
    assert run_batch(batch_bin, manifest, run_dir, "--no-ab", "--resume").returncode == 1
    assert verdicts(run_dir) == verdicts(single_rank_run[0])
    perf = json.loads((run_dir / "ops" / "relu_ok" / "perf_result.json").read_text())
    assert (perf["total_cases"], perf["passed_cases"]) == (4, 4)


def test_benchmark_phase_covers_the_operators_that_passed(single_rank_run):
    run_dir, _ = single_rank_run
    benchmarked = {"relu_ok", "quant_ok", "transpose_ok"}
    for op in MIXED:
        assert (run_dir / "ops" / op / "perf_result.json").exists() == (op in benchmarked), op
    perf = json.loads((run_dir / "ops" / "relu_ok" / "perf_result.json").read_text())
    assert list(perf)[:15] == ["op_name", "warmup", "repeats", "total_cases", "passed_cases", "failed_cases",
                               "nan_indices", "inf_indices", "zero_indices", "negative_indices", "none_indices",
                               "framework", "implementation", "speedup_vs_torch", "per_shape_results"]
    assert (perf["total_cases"], perf["passed_cases"], perf["warmup"], perf["repeats"]) == (4, 4, 5, 50)
    assert all(s["status"] == "pass" and s["speedup_vs_torch"] > 0 for s in perf["per_shape_results"])
    summary = json.loads((run_dir / "summary.json").read_text())
    p = summary["performance"]
    assert (p["operators_total"], p["operators_correct"], p["operators_benchmarked"]) == (7, 3, 3)
    speedups = {o["name"]: o["speedup"] for o in p["operators"]}
    assert set(speedups) == benchmarked
    assert speedups["relu_ok"] == pytest.approx(perf["speedup_vs_torch"])
    logs = [math.log(s) for s in speedups.values()]
    assert p["geomean_speedup"] == pytest.approx(math.exp(sum(logs) / len(logs)))
    for label, factor in (("1.0", 1.0), ("1.5", 1.5), ("2.0", 2.0)):
        assert p["fast_p"][label] == pytest.approx(sum(s > factor for s in speedups.values()) / 7)
    assert set(p["by_dtype"]) >= {"float32", "bfloat16"}  # relu_ok's last shape is bfloat16
    assert summary["time_split"]["bench_s"] > 0
    # the checks around each forward have their own line (on cuda the runtime evidence's judging)
    assert 0 <= summary["time_split"]["checks_s"] < summary["time_split"]["rank_seconds"]
    # and each operator's own phases: its cases' wall time, split as the run's is
    for op in summary["operators"]:
        assert sum(op["phases"].values()) <= op["wall_s"] + 1e-6, op
    relu = next(op for op in summary["operators"] if op["name"] == "relu_ok")
    assert relu["phases"]["golden_s"] > 0 and relu["phases"]["impl_s"] > 0, relu
    with h5py.File(run_dir / "results.h5", "r") as f:
        table = f["cases"][:]
        attrs = dict(f.attrs)
    ids = [c.decode() for c in table["case_id"]]
    kinds = dict(zip(ids, (k.decode() for k in table["kind"])))
    assert kinds["relu_ok/#4@bench"] == "bench_shape" and kinds["relu_ok/#4"] == "case"
    assert {kinds[i] for i in ids if "/@bench-item/" in i} == {"bench_item"}
    assert {kinds[i] for i in ids if "/@operator/" in i} == {"operator"}
    # The root counts cases only: the facts and benchmark rows are records, not cases.
    cases = table[table["kind"] == b"case"]
    assert attrs["cases"] == len(cases) == summary["totals"]["cases"] < attrs["records"] == len(table)
    assert (attrs["passed"], attrs["failed"]) == (cases["passed"].sum(), len(cases) - cases["passed"].sum())


def test_no_bench_skips_the_performance_phase(batch_bin, tmp_path):
    manifest = write_manifest(tmp_path / "one.json", ["relu_ok"])
    assert run_batch(batch_bin, manifest, tmp_path / "run", "--no-bench").returncode == 0
    assert (tmp_path / "run" / "ops" / "relu_ok" / "verify_result.json").exists()
    assert not (tmp_path / "run" / "ops" / "relu_ok" / "perf_result.json").exists()
    assert json.loads((tmp_path / "run" / "summary.json").read_text())["performance"]["operators_benchmarked"] == 0


def test_existing_run_folder_needs_resume(batch_bin, tmp_path):
    manifest = write_manifest(tmp_path / "one.json", ["relu_ok"])
    assert run_batch(batch_bin, manifest, tmp_path / "run").returncode == 0
    again = run_batch(batch_bin, manifest, tmp_path / "run")
    assert again.returncode == 2 and "--resume" in again.stderr


def test_ab_classifies_each_accuracy_failure(batch_bin, tmp_path):
    manifest = write_manifest(tmp_path / "ab.json", ["scale_accuracy", "ab_cache_suspect", "ab_nondeterministic"])
    run_dir = tmp_path / "run"
    # A stale "compiled kernel" sits in rank 0's cache before the run.
    cache = run_dir / "cache" / "rank-0000" / "triton"
    cache.mkdir(parents=True)
    (cache / "fixture_kernel.json").write_text(json.dumps({"scale": 2.5}))
    proc = run_batch(batch_bin, manifest, run_dir)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    ab = {f["op"]: f["ab"] for f in summary["failures"]}
    assert ab == {"scale_accuracy": "real_defect", "ab_cache_suspect": "compiler_suspect",
                  "ab_nondeterministic": "nondeterministic"}
    with h5py.File(run_dir / "results.h5", "r") as f:
        shard_name = [k for k in f["shards"]][0]
    records = {}
    with h5py.File(run_dir / "shards" / "rank-0000.h5", "r") as f:
        for name in f["cases"]:
            attrs = f["cases"][name].attrs
            if attrs["case_index"] >= 0:  # rows of operator-level facts have -1
                records[attrs["op_name"]] = json.loads(attrs["ab"])
    suspect = records["ab_cache_suspect"]
    assert suspect["bitwise_equal"] == {"fresh": False, "same_cache": True}
    assert os.path.isdir(suspect["kept_cache_dir"])
    assert "original" in suspect["environments"] and "fresh" in suspect["environments"]
    assert records["scale_accuracy"]["kept_cache_dir"] is None
    assert shard_name.startswith("rank-0000")
    # junit.xml shows each A/B attempt of a failed case.
    import xml.etree.ElementTree as ET
    cases = {c.get("name"): c for c in ET.parse(run_dir / "junit.xml").getroot().iter("testcase")}
    failure = cases["ab_cache_suspect/#1"].find("failure")
    assert "[A/B: compiler_suspect]" in failure.get("message")
    out = cases["ab_cache_suspect/#1"].find("system-out").text
    assert out.count("attempt ") == 3 and "fresh" in out and "same_cache" in out


def test_an_operator_that_replaces_torch_functions_gets_no_successor_in_its_process(batch_bin, tmp_path):
    # golden_fallback's reference and implementation use torch.exp, which
    # taint_torch replaced in its executor; no implementation executor serves a
    # second operator (docs/SECURITY.md, "The trust boundary"), and the
    # reference executor never imported taint_torch's implementation.
    manifest = write_manifest(tmp_path / "taint.json", ["taint_torch", "golden_fallback"])
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--no-ab", "-v")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert verdicts(tmp_path / "run")["golden_fallback/#1"] == (True, "")
    # With the golden shared (the pooled single executor of before), the taint check retires it.
    shared = run_batch(batch_bin, manifest, tmp_path / "shared", "--no-ab", "-v",
                       env={"OPVERIFY_SHARED_GOLDEN": "1"})
    assert shared.returncode == 0, shared.stderr[-3000:]
    assert verdicts(tmp_path / "shared")["golden_fallback/#1"] == (True, "")
    assert "tainted" in (tmp_path / "shared" / "logs" / "rank-0000.log").read_text()


@pytest.mark.parametrize("content,words", [
    ("{ not json", ["bad.json:1:"]),
    (json.dumps({"name": "x", "operators": [{"name": "relu_ok", "dir": CPU_OPS, "tiemout_s": 3}]}), ["tiemout_s"]),
    (json.dumps({"name": "x", "operators": [{"name": "no_such_op", "dir": CPU_OPS}]}), ["no_such_op_torch.py"]),
    (json.dumps({"name": "x", "defaults": {"impl_name": "cpu_impl"},
                 "operators": [{"name": "relu_ok", "dir": CPU_OPS}, {"name": "relu_ok", "dir": CPU_OPS}]}), ["relu_ok"]),
])
def test_bad_manifests_exit_2_naming_the_problem(batch_bin, tmp_path, content, words):
    manifest = tmp_path / "bad.json"
    manifest.write_text(content)
    proc = run_batch(batch_bin, manifest, tmp_path / "run")
    assert proc.returncode == 2
    assert "bad.json" in proc.stderr
    for word in words:
        assert word in proc.stderr, proc.stderr
    assert not (tmp_path / "run").exists()


SLOW_TASK = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x + 1


def get_init_inputs():
    return []


def get_inputs(n=8):
    return [torch.ones(n)]
"""
SLOW_IMPL = """import time
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        time.sleep(0.25)
        return x + 1
"""


def test_the_time_limit_stops_every_rank_with_the_reports_and_resume_finishes(batch_bin, tmp_path):
    """--time-limit under mpirun: the ranks stop themselves as on SIGTERM (no signal through
    mpirun, whose own forwarding kills the ranks before rank 0 writes the reports), the
    summary says why, and --resume runs the rest."""
    ops = tmp_path / "ops"
    ops.mkdir()
    names = [f"slow_{i}" for i in range(6)]
    for op in names:
        (ops / f"{op}_torch.py").write_text(SLOW_TASK)
        (ops / f"{op}_cpu_impl.py").write_text(SLOW_IMPL)
    manifest = tmp_path / "slow.json"
    manifest.write_text(json.dumps({"name": "slow", "defaults": {"impl_name": "cpu_impl", "lint": False,
                                                                 "sweep": {"n": list(range(1, 11))}},
                                    "operators": [{"name": op, "dir": str(ops)} for op in names]}))
    run_dir = tmp_path / "run"
    started = time.monotonic()
    proc = run_batch(batch_bin, manifest, run_dir, "--no-bench", "--time-limit", "12", ranks=2)
    assert time.monotonic() - started < 90, "the time limit did not stop the run"
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["stopped_by_time_limit"] == {"seconds": 12}, summary
    assert "stopped_by_signal" not in summary
    assert 0 <= summary["totals"]["cases"] < 60 and summary["totals"]["failed"] == 0
    assert "stopped by --time-limit" in proc.stderr and "--resume runs the rest" in proc.stderr
    # what the stop left is a warning naming it, not an error of results lost
    assert "operators not finished when the run stopped" in proc.stderr, proc.stderr[-3000:]
    assert "unreadable" not in proc.stderr and "[error]" not in proc.stderr, proc.stderr[-3000:]
    assert "Stopped by --time-limit (12 s)" in (run_dir / "report.md").read_text()
    resumed = run_batch(batch_bin, manifest, run_dir, "--resume", "--no-bench", ranks=2)
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["totals"]["cases"] == 60 and summary["totals"]["passed"] == 60
    assert "stopped_by_signal" not in summary


def test_a_case_the_time_limit_cuts_short_is_its_own_time_not_start_up(batch_bin, tmp_path):
    """A case in flight when --time-limit stops the run ran, but is not stored: the time split
    (summary.json) and the timeline count its time as `stopped_s`, not as the executor's start-up,
    which is what the rest of an item's time is. The forward writes the wall time it began (so
    without the sandbox, which is not what this tests), and the bounds hold however long a loaded
    machine takes to start the executor."""
    ops = tmp_path / "ops"
    ops.mkdir()
    began = tmp_path / "forward_began"
    (ops / "hang_torch.py").write_text(SLOW_TASK)
    (ops / "hang_cpu_impl.py").write_text(SLOW_IMPL.replace(
        "time.sleep(0.25)", f"open({str(began)!r}, 'w').write(repr(time.time()))\n        time.sleep(120)"))
    manifest = tmp_path / "hang.json"
    manifest.write_text(json.dumps({"name": "hang", "defaults": {"impl_name": "cpu_impl", "lint": False,
                                                                 "timeout_s": 300},
                                    "operators": [{"name": "hang", "dir": str(ops)}]}))
    run_dir = tmp_path / "run"
    limit_s = 20
    launched = time.time()
    proc = run_batch(batch_bin, manifest, run_dir, "--no-bench", "--sandbox", "none",
                     "--time-limit", str(limit_s), ranks=2)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert began.exists(), "the executor did not reach the forward before the stop: " + proc.stderr[-3000:]
    forward_began = float(began.read_text())
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["totals"]["cases"] == 0 and summary["not_run"], summary
    split = summary["time_split"]
    # The stop came at least limit_s after the launch: the forward ran from its start to then.
    assert split["stopped_s"] >= launched + limit_s - forward_began - 0.5, (split, forward_began - launched)
    # Start-up ended before the forward began, and the item began after the launch.
    assert split["startup_s"] <= forward_began - launched + 0.5, (split, forward_began - launched)
    assert summary["timing"]["stopped_s"] == pytest.approx(split["stopped_s"])
    items = [item for item in summary["timeline"]["items"] if item["op"] == "hang"]
    assert len(items) == 1 and items[0]["stopped_s"] == pytest.approx(split["stopped_s"]), items


@pytest.mark.parametrize("signame", ["SIGUSR1", "SIGTERM"])
def test_a_stop_signal_writes_partial_reports_and_resume_finishes(batch_bin, tmp_path, signame):
    ops = tmp_path / "ops"
    ops.mkdir()
    for op in ("slow_a", "slow_b", "slow_c"):
        (ops / f"{op}_torch.py").write_text(SLOW_TASK)
        (ops / f"{op}_cpu_impl.py").write_text(SLOW_IMPL)
    manifest = tmp_path / "slow.json"
    manifest.write_text(json.dumps({"name": "slow", "defaults": {"impl_name": "cpu_impl", "lint": False,
                                                                 "sweep": {"n": list(range(1, 11))}},
                                    "operators": [{"name": op, "dir": str(ops)} for op in ("slow_a", "slow_b", "slow_c")]}))
    run_dir = tmp_path / "run"
    proc = subprocess.Popen([batch_bin, str(manifest), "--backend", "cpu", "--run-dir", str(run_dir), "--no-bench"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **MPI_ENV))
    journal = run_dir / "shards" / "rank-0000.journal"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and not (journal.exists() and journal.read_text().count("\n") >= 2):
        time.sleep(0.05)
    proc.send_signal(getattr(signal, signame))
    started = time.monotonic()
    out, err = proc.communicate(timeout=60)
    assert time.monotonic() - started < 10, "the run did not stop soon after the signal"
    assert proc.returncode == 1, err[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["stopped_by_signal"] == signame
    assert summary["unassigned_items"] >= 1
    assert 1 <= summary["totals"]["cases"] < 30 and summary["totals"]["failed"] == 0
    assert (run_dir / "report.html").exists() and (run_dir / "junit.xml").exists()
    # junit.xml lists every case not reached as <skipped>, saying that the stop left it.
    import xml.etree.ElementTree as ET
    junit = ET.parse(run_dir / "junit.xml").getroot()
    skipped = [c.find("skipped").get("message") for c in junit.iter("testcase") if c.find("skipped") is not None]
    assert len(skipped) == 30 - summary["totals"]["cases"] and junit.get("skipped") == str(len(skipped))
    assert all(f"stopped by {signame}" in message for message in skipped)
    assert "--resume runs the rest" in err
    resumed = run_batch(batch_bin, manifest, run_dir, "--resume", "--no-bench")
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["totals"] == {"operators": 3, "cases": 30, "passed": 30, "waived": 0, "failed": 0, "lost": 0}
    assert "stopped_by_signal" not in summary
    assert ET.parse(run_dir / "junit.xml").getroot().get("skipped") == "0"


def test_task_file_anchors(batch_bin, tmp_path):
    import hashlib
    ops = tmp_path / "ops"
    ops.mkdir()
    for suffix in ("torch", "cpu_impl"):
        (ops / f"relu_ok_{suffix}.py").write_text((open(os.path.join(CPU_OPS, f"relu_ok_{suffix}.py")).read()))
    task = ops / "relu_ok_torch.py"
    digest = hashlib.sha256(task.read_bytes()).hexdigest()

    def manifest(anchor):
        entry = {"name": "relu_ok", "dir": str(ops)}
        if anchor:
            entry["task_sha256"] = anchor
        path = tmp_path / f"m{len(list(tmp_path.glob('m*.json')))}.json"
        path.write_text(json.dumps({"name": "anchors", "defaults": {"impl_name": "cpu_impl", "lint": False},
                                    "operators": [entry]}))
        return path

    assert run_batch(batch_bin, manifest(digest), tmp_path / "ok", "--no-bench").returncode == 0
    missing = run_batch(batch_bin, manifest(None), tmp_path / "missing", "--require-anchors")
    assert missing.returncode == 3 and "no task_sha256 anchor" in missing.stderr
    task.write_text(task.read_text() + "\n# edited\n")  # the reference changed after it was pinned
    changed = run_batch(batch_bin, manifest(digest), tmp_path / "changed")
    assert changed.returncode == 4
    assert str(task) in changed.stderr and digest in changed.stderr and "was changed" in changed.stderr
    assert not (tmp_path / "changed").exists()  # refused before anything ran


def test_manifest_repeat_runs_each_case_again(batch_bin, tmp_path):
    manifest = write_manifest(tmp_path / "repeat.json", ["jitter_ok", "relu_ok"], repeat=3)
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--no-bench", "--no-ab")
    assert proc.returncode == 1, proc.stderr[-3000:]
    v = verdicts(tmp_path / "run")
    assert v["jitter_ok/#1"] == (False, "Nondeterministic")
    assert all(v[f"relu_ok/#{i}"] == (True, "") for i in range(1, 5))


def test_a_long_multibyte_error_message_keeps_every_report(batch_bin, tmp_path):
    # The reports cut messages (2000 characters stored, 300 in summary.json):
    # never inside a character, so every file is still written.
    ops = tmp_path / "ops"
    ops.mkdir()
    (ops / "wide_torch.py").write_text(open(os.path.join(CPU_OPS, "relu_ok_torch.py")).read())
    (ops / "wide_cpu_impl.py").write_text(
        "import torch\n\n\nclass ModelNew(torch.nn.Module):\n"
        "    def forward(self, x):\n        raise ValueError('\\u9519\\u8bef\\u4fe1\\u606f' * 1000)\n")
    manifest = tmp_path / "wide.json"
    manifest.write_text(json.dumps({"name": "wide", "defaults": {"impl_name": "cpu_impl", "lint": False, "seeds": 1},
                                    "operators": [{"name": "wide", "dir": str(ops)}]}))
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--no-ab")
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = json.loads((tmp_path / "run" / "summary.json").read_text(encoding="utf-8"))
    assert summary["totals"]["failed"] == summary["totals"]["cases"] > 0
    result = json.loads((tmp_path / "run" / "ops" / "wide" / "verify_result.json").read_text(encoding="utf-8"))
    assert "[truncated " in result["failures"][0]["error_msg"]
    assert (tmp_path / "run" / "junit.xml").exists()


def test_ranks_that_read_different_jobs_refuse_the_run(batch_bin, tmp_path):
    """Each rank reads the manifest itself: one that read another job (an edit while the ranks
    started, nodes that see different files) would run other operators under the same item ids.
    Here mpirun's MPMD form gives rank 1 a manifest with one operator fewer: exit 2 on every
    rank, rank 0 says which rank differs, and nothing runs."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    whole = write_manifest(tmp_path / "a" / "job.json", ["relu_ok", "quant_ok"])
    fewer = write_manifest(tmp_path / "b" / "job.json", ["relu_ok"])
    run_dir = tmp_path / "run"
    common = ["--backend", "cpu", "--run-dir", str(run_dir), "--no-bench"]
    command = ["mpirun", "--oversubscribe", "-np", "1", batch_bin, str(whole), *common,
               ":", "-np", "1", batch_bin, str(fewer), *common]
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, env=dict(os.environ, **MPI_ENV))
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "rank 1: it read a different job than rank 0" in proc.stderr, proc.stderr[-3000:]
    assert not (run_dir / "summary.json").exists()
    # The same operators judged otherwise (another per-case timeout) are another job too.
    (tmp_path / "c").mkdir()
    slower = write_manifest(tmp_path / "c" / "job.json", ["relu_ok", "quant_ok"], timeout_s=123)
    command[command.index(str(fewer))] = str(slower)
    proc = subprocess.run(command, capture_output=True, text=True, timeout=300, env=dict(os.environ, **MPI_ENV))
    assert proc.returncode == 2 and "rank 1: it read a different job" in proc.stderr, proc.stderr[-3000:]
    # So are another warm-up allowance, and a declared exception that says otherwise (its count the same).
    reason = {"allow_torch": [{"op": "aten::relu", "why": "the reason"}]}
    for name, base, other in (("d", {}, {"warmup_timeout_s": 60}),
                              ("e", reason, {"allow_torch": [{"op": "aten::relu", "why": "another reason"}]})):
        for side, defaults in (("a", base), ("b", other)):
            (tmp_path / name / side).mkdir(parents=True)
            write_manifest(tmp_path / name / side / "job.json", ["relu_ok", "quant_ok"], **defaults)
        command = ["mpirun", "--oversubscribe", "-np", "1", batch_bin, str(tmp_path / name / "a" / "job.json"),
                   *common, ":", "-np", "1", batch_bin, str(tmp_path / name / "b" / "job.json"), *common]
        proc = subprocess.run(command, capture_output=True, text=True, timeout=300, env=dict(os.environ, **MPI_ENV))
        assert proc.returncode == 2 and "rank 1: it read a different job" in proc.stderr, (name, proc.stderr[-3000:])

    same = run_batch(batch_bin, whole, tmp_path / "same", "--no-bench", ranks=2)
    assert same.returncode == 0, same.stderr[-3000:]


ENV_CHECK_IMPL = """import os

import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
        # The executor's compiler cache keeps autotuning results (--cache-dir).
        if os.environ.get("TRITON_CACHE_AUTOTUNING") != "1":
            raise RuntimeError("TRITON_CACHE_AUTOTUNING is " + repr(os.environ.get("TRITON_CACHE_AUTOTUNING")))
        return x.clamp(min=0)
"""


def test_each_ranks_persistent_cache_starts_with_what_its_siblings_compiled(batch_bin, tmp_path):
    """--cache-dir: before its first executor, a rank links in the Triton cache files the other
    ranks' folders have and its own lacks (a night's plan rarely gives a rank the operators it had
    the night before), its own files kept, nothing copied; and the executors keep autotuning
    results in the cache."""
    cache = tmp_path / "cache"
    theirs = cache / "rank-0001" / "triton" / "K1" / "kernel.cubin"
    theirs.parent.mkdir(parents=True)
    theirs.write_text("compiled by rank 1 last night")
    (cache / "rank-0000" / "triton" / "K2").mkdir(parents=True)
    (cache / "rank-0000" / "triton" / "K2" / "tuned.autotune.json").write_text("rank 0's choice")
    (cache / "rank-0001" / "triton" / "K2").mkdir(parents=True)
    (cache / "rank-0001" / "triton" / "K2" / "tuned.autotune.json").write_text("rank 1's own")
    ops = tmp_path / "ops"
    ops.mkdir()
    shutil.copy(os.path.join(CPU_OPS, "relu_ok_torch.py"), ops / "env_check_torch.py")  # a relu task
    (ops / "env_check_cpu_impl.py").write_text(ENV_CHECK_IMPL)
    manifest = tmp_path / "job.json"
    manifest.write_text(json.dumps({"name": "warm", "defaults": {"impl_name": "cpu_impl", "lint": False},
                                    "operators": [{"name": "env_check", "dir": str(ops)}]}))
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--no-bench", "--cache-dir", str(cache), ranks=2)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    ours = cache / "rank-0000" / "triton" / "K1" / "kernel.cubin"
    assert ours.read_text() == "compiled by rank 1 last night"
    assert os.stat(ours).st_ino == os.stat(theirs).st_ino  # a link, not a copy
    assert (cache / "rank-0000" / "triton" / "K2" / "tuned.autotune.json").read_text() == "rank 0's choice"
    assert (cache / "rank-0001" / "triton" / "K2" / "tuned.autotune.json").read_text() == "rank 1's own"
    logs = "".join(p.read_text(errors="replace") for p in (tmp_path / "run" / "logs").glob("*"))
    assert "files taken from the other ranks' caches" in logs + proc.stderr, logs[-3000:]
