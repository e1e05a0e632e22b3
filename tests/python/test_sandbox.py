"""The executors' sandbox (docs/SECURITY.md) against hostile implementations
(tests/fixtures/hostile): each becomes a per-case verdict, the run ends with
its reports, nothing it wrote lands outside its scratch folder, and no process
of the run is left afterwards. Through the real `opverify verify` (bwrap and
unshare) and `opverify-batch` (mpirun -np 2, and --resume after a SIGKILL)."""
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import uuid

import pytest

from conftest import processes_marked

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HOSTILE = os.path.join(ROOT, "tests", "fixtures", "hostile")
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
OPS = ["kill_parent", "stop_parent", "setsid_child", "flood", "memory_hog", "write_outside", "network", "home_cache",
       "truncate_tensors", "inherited_fds", "unix_socket", "memory_shared", "memory_dev_shm", "memory_memfd",
       "memory_growsdown", "fork_bomb", "ptrace_init", "reference_too_big", "reach_spare"]
SECRET = b"the secret a hostile implementation must not read on stdin"
LIMITS = ["--memory-limit", "1G", "--executor-log-cap", "1M"]


def expected(op):
    spec = importlib.util.spec_from_file_location(f"{op}_task", os.path.join(HOSTILE, f"{op}_torch.py"))
    module = importlib.util.module_from_spec(spec)
    source = open(spec.origin).read()
    # EXPECTED_ERROR_TYPE only: the task imports torch, which the test need not.
    line = next(text for text in source.splitlines() if text.startswith("EXPECTED_ERROR_TYPE"))
    exec(line, module.__dict__)
    return module.EXPECTED_ERROR_TYPE


def namespaces_work(mode):
    helper = os.path.join(BUILD, "runner", "opverify-sandbox")
    if mode == "bwrap":
        command = ["bwrap", "--unshare-all", "--share-net", "--die-with-parent", "--ro-bind", "/", "/",
                   "--dev", "/dev", "--proc", "/proc", "true"]
    else:
        command = ["unshare", "--pid", "--fork", "--mount-proc", "--net", "true"]
    try:
        return os.access(helper, os.X_OK) and subprocess.run(command, capture_output=True, timeout=30).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


@pytest.fixture
def env(tmp_path):
    """The environment of the programs under test: a mark to find their processes by, a $HOME of
    the test's own; after the test, no process with the mark may be left (`ps`)."""
    mark = f"opverify-sandbox-test-{uuid.uuid4().hex}"
    home = tmp_path / "home"
    home.mkdir()
    # One BLAS thread: OpenBLAS's per-thread buffers on a many-core machine alone would not fit
    # under the tests' 1 GiB memory limit (the default limit is a share of the machine).
    environment = dict(os.environ, OPVERIFY_TEST_MARK=mark, HOME=str(home), OPENBLAS_NUM_THREADS="1",
                       OMP_NUM_THREADS="1", **MPI_ENV)
    yield environment
    left = processes_marked(mark)
    for _ in range(50):  # a reaped parent's last children are a moment behind it
        if not left:
            break
        time.sleep(0.1)
        left = processes_marked(mark)
    for pid, _ in left:
        os.kill(pid, signal.SIGKILL)
    assert not left, f"processes outlived the run: {left}"


@pytest.fixture
def ops_dir(tmp_path):
    """A copy of the hostile fixtures (write_outside writes beside its own file)."""
    folder = tmp_path / "ops"
    shutil.copytree(HOSTILE, folder)
    return folder


@pytest.fixture
def short_socket_path():
    """A path for a unix socket in /tmp, within the 107 bytes a socket's path may have."""
    folder = tempfile.mkdtemp(prefix="ovsock-")
    yield os.path.join(folder, "daemon.sock")
    shutil.rmtree(folder, ignore_errors=True)


class Listener:
    """A TCP port on 127.0.0.1, or a unix socket at `path` (a host daemon's in /run or /tmp), that
    records whoever connects."""

    def __init__(self, path=None):
        self.socket = socket.socket(socket.AF_UNIX if path else socket.AF_INET)
        self.socket.bind(str(path) if path else ("127.0.0.1", 0))
        self.socket.listen()
        self.socket.settimeout(0.2)
        self.path = str(path) if path else None
        self.port = None if path else self.socket.getsockname()[1]
        self.connections = 0
        self.running = True
        self.thread = threading.Thread(target=self.accept, daemon=True)
        self.thread.start()

    def accept(self):
        while self.running:
            try:
                connection, _ = self.socket.accept()
                self.connections += 1
                connection.close()
            except OSError:
                continue

    def close(self):
        self.running = False
        self.thread.join()
        self.socket.close()


def run_verify(opverify_bin, op, ops_dir, env, *flags, timeout=120, stdin=None):
    output = ops_dir / f"{op}.verify_result.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", op, "--verify_dir", str(ops_dir),
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint",
                           # Room for torch's import on a loaded machine; the flood needs no more.
                           "--timeout", {"flood": "8", "fork_bomb": "60"}.get(op, "20"),
                           "--output", str(output), *LIMITS, *flags],
                          capture_output=True, text=True, timeout=timeout, env=env, stdin=stdin)
    result = json.loads(output.read_text()) if output.exists() else None
    return proc, result


def error_types(result):
    """Each case's error type (None: passed); every hostile fixture has one case."""
    failed = {f["case_idx"]: f["error_type"] for f in result["failures"]}
    return [failed.get(index) for index in range(1, result["total_cases"] + 1)]


def failure_messages(results):
    """Each failing case's error type and message: what a red CI run needs to tell a crash's cause."""
    return "\n".join(f"{op} case {f['case_idx']}: {f['error_type']}: {f.get('error_msg', '')[-1500:]}"
                     for op, result in sorted(results.items()) for f in result["failures"])


def check_left_nothing_behind(ops_dir, home, run_dir=None):
    marks = [ops_dir / "INJECTED_BY_write_outside", home / "INJECTED_BY_write_outside", home / ".flaggems",
             home / ".local", home / ".cache"]
    if run_dir is not None:
        marks.append(run_dir / "shards" / "INJECTED_BY_write_outside")
    assert not [m for m in marks if m.exists()]


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
@pytest.mark.parametrize("op", OPS)
def test_a_hostile_implementation_gets_a_verdict_in_verify(opverify_bin, ops_dir, env, tmp_path, short_socket_path,
                                                           mode, op):
    if not namespaces_work(mode):
        pytest.skip(f"{mode} cannot create namespaces here")
    listener, unix_listener = Listener(), Listener(short_socket_path)
    env["OPVERIFY_HOSTILE_PORT"] = str(listener.port)
    env["OPVERIFY_HOSTILE_UNIX"] = unix_listener.path
    secret = tmp_path / "secret"
    secret.write_bytes(SECRET)
    started = time.monotonic()
    try:
        with open(secret, "rb") as stdin:  # `opverify verify < secret`
            proc, result = run_verify(opverify_bin, op, ops_dir, env, "--sandbox", mode, stdin=stdin)
    finally:
        listener.close()
        unix_listener.close()
    assert result is not None, f"exit {proc.returncode}, no verify_result.json: {proc.stderr[-3000:]}"
    want = expected(op)
    assert proc.returncode == (0 if want is None else 1), proc.stderr[-3000:]
    assert error_types(result) == [want], result["failures"]
    assert result["environment"]["sandbox"] == mode
    assert time.monotonic() - started < (120 if op == "fork_bomb" else 60)
    assert listener.connections == 0 and unix_listener.connections == 0
    check_left_nothing_behind(ops_dir, tmp_path / "home")
    log = ops_dir / f"{op}.verify_result.executor.log"
    assert log.stat().st_size <= 1 << 20
    assert "INJECTED_BY_inherited_fds" not in proc.stdout + proc.stderr
    if op == "flood":
        assert "output cut here: this log reached its cap of 1048576 bytes" in log.read_text(errors="replace")
    if op in ("write_outside", "network", "unix_socket"):
        assert "the sandbox refused" in result["failures"][0]["error_msg"]
    if op.startswith("memory_") and op != "memory_hog":
        assert "the sandbox's limit" in result["failures"][0]["error_msg"]
    if op == "fork_bomb" and getattr(os, "geteuid", lambda: 0)() == 0:
        assert "the sandbox's process limit" in result["failures"][0]["error_msg"]
    if op == "reference_too_big":
        assert "the memory limit is too small for the reference" in result["failures"][0]["error_msg"]


def test_crash_signals_are_reported_through_the_sandbox(opverify_bin, env, tmp_path):
    # bwrap and our init report a signal death as exit code 128+N; the verdict names the signal.
    cpu_ops = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")
    output = tmp_path / "segv.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", "crash_segv", "--verify_dir", cpu_ops,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--output", str(output)],
                          capture_output=True, text=True, timeout=120, env=env)
    result = json.loads(output.read_text())
    assert proc.returncode == 1
    assert result["environment"]["sandbox"] in ("bwrap", "unshare")
    assert "signal SIGSEGV (11)" in result["failures"][0]["error_msg"]


def fake_tools(tmp_path):
    """A PATH whose bwrap and unshare fail the way they do where namespaces are not allowed."""
    fake = tmp_path / "fakebin"
    fake.mkdir()
    for tool in ("bwrap", "unshare"):
        script = fake / tool
        script.write_text(f"#!/bin/sh\necho '{tool}: creating new namespace failed: Operation not permitted' >&2\nexit 1\n")
        script.chmod(0o755)
    return f"{fake}:{os.environ.get('PATH', '')}"


def test_without_namespaces_auto_falls_back_to_none_with_a_warning(opverify_bin, env, tmp_path):
    env["PATH"] = fake_tools(tmp_path)
    cpu_ops = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")
    output = tmp_path / "relu.json"
    proc = subprocess.run([opverify_bin, "verify", "--op_name", "relu_ok", "--verify_dir", cpu_ops,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--output", str(output)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(output.read_text())["environment"]["sandbox"] == "none"
    assert "executors run without a sandbox" in proc.stderr and "Operation not permitted" in proc.stderr
    # Asked for by name, a sandbox that does not work is an error, before anything runs.
    proc = subprocess.run([opverify_bin, "verify", "--op_name", "relu_ok", "--verify_dir", cpu_ops,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--output",
                           str(tmp_path / "refused.json"), "--sandbox", "bwrap"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 2 and "--sandbox bwrap: bwrap does not start here" in proc.stderr, proc.stderr
    assert not (tmp_path / "refused.json").exists()


def test_bad_sandbox_options_are_usage_errors(opverify_bin, tmp_path):
    for flags in (["--sandbox", "chroot"], ["--memory-limit", "lots"], ["--executor-log-cap", "-1M"]):
        proc = subprocess.run([opverify_bin, "verify", "--op_name", "x", "--verify_dir", str(tmp_path), *flags],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 2, (flags, proc.stderr)
        assert flags[0] in proc.stderr


@pytest.fixture(scope="session")
def batch_bin():
    path = os.path.join(BUILD, "runner", "opverify-batch")
    assert os.access(path, os.X_OK), path
    return path


# The fork bomb's 1100 spawns take more than 15 s on a loaded 2-core machine: it gets the minute
# that test_a_hostile_implementation_gets_a_verdict_in_verify gives it.
# The flood's case ends by its limit; the others end well within 40 s, which
# leaves room for torch's import while fork_bomb loads the machine beside
# them (at 15 s, kill_parent, setsid_child and write_outside timed out at a
# load of 50).
OPERATOR_TIMEOUTS = {"fork_bomb": 60, "flood": 15}


def hostile_manifest(path, ops_dir, ops, timeout_s=40):
    """The manifest of `ops`, every case `timeout_s` seconds but those of OPERATOR_TIMEOUTS (the
    batches below give no --timeout, which would override the operators' own)."""
    operators = [{"name": op, "dir": str(ops_dir), **({"timeout_s": OPERATOR_TIMEOUTS[op]}
                                                      if op in OPERATOR_TIMEOUTS else {})} for op in ops]
    path.write_text(json.dumps({"name": "hostile", "defaults": {"impl_name": "cpu_impl", "lint": False,
                                                                "timeout_s": timeout_s},
                                "operators": operators}))
    return path


def batch_verdicts(run_dir):
    return {op: json.loads((run_dir / "ops" / op / "verify_result.json").read_text()) for op in OPS
            if (run_dir / "ops" / op / "verify_result.json").exists()}


def test_a_two_rank_batch_of_hostile_implementations_ends_with_reports(batch_bin, ops_dir, env, tmp_path,
                                                                       short_socket_path):
    if not namespaces_work("bwrap") and not namespaces_work("unshare"):
        pytest.skip("no namespaces here")
    listener, unix_listener = Listener(), Listener(short_socket_path)
    env["OPVERIFY_HOSTILE_PORT"] = str(listener.port)
    env["OPVERIFY_HOSTILE_UNIX"] = unix_listener.path
    manifest = hostile_manifest(tmp_path / "hostile.json", ops_dir, OPS)
    run_dir = tmp_path / "run"
    try:
        proc = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", batch_bin, str(manifest), "--backend", "cpu",
                               "--run-dir", str(run_dir), "--no-bench", *LIMITS],
                              capture_output=True, text=True, timeout=480, env=env)
    finally:
        listener.close()
        unix_listener.close()
    assert proc.returncode == 1, proc.stderr[-3000:]
    results = batch_verdicts(run_dir)
    assert {op: error_types(r) for op, r in results.items()} == {op: [expected(op)] for op in OPS}, \
        failure_messages(results)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["sandbox"]["mode"] in ("bwrap", "unshare")
    assert summary["sandbox"]["log_cap_bytes"] == 1 << 20 and summary["sandbox"]["memory_limit_bytes"] == 1 << 30
    assert summary["totals"]["cases"] == len(OPS)
    assert (run_dir / "report.html").exists() and (run_dir / "junit.xml").exists()
    # The libraries' caches of the night lie in the rank's home folder in the run folder.
    assert list((run_dir / "cache").glob("rank-*/home/.flaggems/code_cache/relu_generated.py"))
    for log in (run_dir / "logs").glob("rank-*.executor.log"):
        assert log.stat().st_size <= 1 << 20
    assert listener.connections == 0 and unix_listener.connections == 0
    check_left_nothing_behind(ops_dir, tmp_path / "home", run_dir)
    # What inherited_fds wrote into every descriptor it found landed in its capped log alone.
    injected = [str(path) for path in run_dir.rglob("*") if path.is_file() and "executor.log" not in path.name
                and b"INJECTED_BY_inherited_fds" in path.read_bytes()]
    assert not injected and "INJECTED_BY_inherited_fds" not in proc.stdout + proc.stderr


def operator_startups(run_dir):
    """op -> its implementation executor's start-up record (the operator row's extra.startup)."""
    import h5py
    startups = {}
    for shard in sorted((run_dir / "shards").glob("rank-*.h5")):
        with h5py.File(shard, "r") as f:
            for row in f["cases"].values():
                extra = json.loads(row.attrs.get("extra", "{}"))
                if extra.get("kind") == "operator":
                    startups[row.attrs["op_name"]] = extra.get("startup")
    return startups


@pytest.mark.parametrize("mode", ["bwrap", "unshare"])
def test_hostile_operators_leave_nothing_in_the_spare_started_beside_them(batch_bin, ops_dir, env, tmp_path, mode):
    """One rank, the hostile operators first: each next operator gets a spare executor started while
    the one before ran (docs/PERFORMANCE.md), which none of them reached, and an honest operator and
    the hidden-state probe still pass in it."""
    if not namespaces_work(mode):
        pytest.skip(f"{mode} does not work here")
    cpu_ops = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")
    order = ["reach_spare", "setsid_child", "home_cache", "write_outside", "relu_ok", "hidden_state_ok"]
    operators = [{"name": op, "dir": cpu_ops if op.endswith("_ok") else str(ops_dir)} for op in order]
    manifest = tmp_path / "spare.json"
    manifest.write_text(json.dumps({"name": "spare", "defaults": {"impl_name": "cpu_impl", "lint": False,
                                                                 "bench": {"enabled": False}},
                                    "operators": operators}))
    run_dir = tmp_path / "run"
    proc = subprocess.run([batch_bin, str(manifest), "--backend", "cpu", "--run-dir", str(run_dir), "--timeout",
                           "60", "--no-ab", "--sandbox", mode, *LIMITS],
                          capture_output=True, text=True, timeout=600, env=env)
    assert proc.returncode == 1, proc.stderr[-3000:]  # write_outside fails, as it should
    results = {op: json.loads((run_dir / "ops" / op / "verify_result.json").read_text()) for op in order}
    assert {op: set(error_types(r)) for op, r in results.items()} == {
        op: {"SandboxViolation" if op == "write_outside" else None} for op in order}
    startups = operator_startups(run_dir)
    assert not startups["reach_spare"]["spare"], startups
    for op in order[1:]:  # each got a spare that had started before it, and that answered
        assert startups[op]["spare"], (op, startups)
    assert "did not come up" not in proc.stdout + proc.stderr
    log = "\n".join(path.read_text(errors="replace") for path in (run_dir / "logs").glob("rank-*.executor.log"))
    assert "reach_spare: stopped 0, wrote 0" in log, log[-3000:]
    assert "INJECTED_BY" not in log
    check_left_nothing_behind(ops_dir, tmp_path / "home", run_dir)


def test_resume_of_a_run_with_the_killer_finishes(batch_bin, ops_dir, env, tmp_path):
    if not namespaces_work("bwrap") and not namespaces_work("unshare"):
        pytest.skip("no namespaces here")
    ops = ["setsid_child", "kill_parent", "stop_parent"]
    manifest = hostile_manifest(tmp_path / "hostile.json", ops_dir, ops)
    run_dir = tmp_path / "run"
    command = [batch_bin, str(manifest), "--backend", "cpu", "--run-dir", str(run_dir), "--no-bench", "--no-ab",
               *LIMITS]
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    journal = run_dir / "shards" / "rank-0000.journal"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (journal.exists() and journal.read_text().count("\n") >= 1):
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # the rank dies mid-run: its executors must die with it
    proc.wait()
    resumed = subprocess.run(command + ["--resume"], capture_output=True, text=True, timeout=120, env=env)
    assert resumed.returncode == 1, resumed.stderr[-3000:]
    results = batch_verdicts(run_dir)
    assert {op: error_types(r) for op, r in results.items()} == {op: [expected(op)] for op in ops}, \
        failure_messages(results) + "\n--- resumed run's stderr ---\n" + resumed.stderr[-3000:]
    assert json.loads((run_dir / "summary.json").read_text())["totals"]["cases"] == len(ops)
