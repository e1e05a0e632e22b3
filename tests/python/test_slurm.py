"""Nightly sweeps on a real Slurm cluster. The module starts munged,
slurmctld and slurmd (Debian's slurm-wlm 22.05) on this machine with a
configuration of its own in a temporary folder, installs opverify into a
temporary prefix and submits the shipped slurm/ scripts on the cpu backend:
a 2-task sweep (srun --mpi=pmix, then mpirun in the allocation) gives the
verdicts of `mpirun -np 2`, the dependent reduce step writes the reports and
the baseline diff against the previous night, a job array's parts merge into
the same verdicts, a requeued job resumes without running stored cases
again, and USR1 (Slurm's warning before the time limit) stops a sweep with
partial reports. When Slurm cannot start here, every test fails with the
daemons' logs."""
import datetime
import glob
import json
import os
import pathlib
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

from test_batch import MPI_ENV, verdicts
from test_long_cases import (STOP_WITHIN_S, assert_complete_partial_reports, executors_of, journaled,
                             long_manifest, sleeper_folders, sleeping, wait_for)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
MANIFEST = os.path.join(ROOT, "jobs", "cpu_mixed.json")
SLURM = os.path.join(ROOT, "slurm")
JOB_WAIT_S = 300
DONE_STATES = {"COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",
               "BOOT_FAIL", "DEADLINE"}


def free_ports(count):
    """Ports nothing listens on now, all different (held open together while chosen)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in sockets]
    finally:
        for s in sockets:
            s.close()


def tail(path, lines=60):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"({e})"


class Cluster:
    """munged, slurmctld and slurmd of one test module, in `base`."""

    def __init__(self):
        # munged wants every folder on its socket's path searchable by all.
        self.base = tempfile.mkdtemp(prefix="opverify-slurm-")
        os.chmod(self.base, 0o755)
        for sub in ("munge", "state", "spool", "log"):
            os.makedirs(os.path.join(self.base, sub), mode=0o755)
        self.conf = os.path.join(self.base, "slurm.conf")
        self.socket = os.path.join(self.base, "munge", "munge.sock")
        self.daemons = []  # (name, Popen), in start order
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "SBATCH_", "SRUN_", "SALLOC_"))}
        self.env["SLURM_CONF"] = self.conf

    def log(self, name):
        return os.path.join(self.base, "log", name)

    def diagnostics(self):
        parts = []
        for name in ("munged.out", "slurmctld.out", "slurmctld.log", "slurmd.out", "slurmd.log"):
            if os.path.exists(self.log(name)):
                parts.append(f"--- {self.log(name)} (last lines)\n{tail(self.log(name))}")
        return "\n".join(parts)

    def fail(self, why):
        pytest.fail(f"local Slurm cluster: {why}\n{self.diagnostics()}", pytrace=False)

    def command(self, *args, check=True, timeout=60):
        proc = subprocess.run(list(args), capture_output=True, text=True, env=self.env, timeout=timeout)
        if check and proc.returncode != 0:
            self.fail(f"{' '.join(args)} exited with {proc.returncode}: {proc.stderr.strip()}")
        return proc

    def spawn(self, name, args):
        out = open(self.log(f"{name}.out"), "w")
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        out.close()
        self.daemons.append((name, proc))
        return proc

    def wait_until(self, what, ready, timeout_s=60):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for name, proc in self.daemons:
                if proc.poll() is not None:
                    self.fail(f"{name} exited with {proc.returncode} while waiting for {what}")
            if ready():
                return
            time.sleep(0.3)
        self.fail(f"no {what} after {timeout_s} s")

    def start(self):
        if os.geteuid() != 0:
            self.fail("must run as root: slurmd starts jobs as their user and slurmctld runs as SlurmUser=root here")
        for program in ("munged", "munge", "unmunge", "slurmctld", "slurmd", "sbatch", "srun", "scontrol"):
            if shutil.which(program) is None:
                self.fail(f"{program} is not installed (tools/dev installs slurm-wlm and munge)")
        # munged: a key of its own, readable by its owner only.
        key = os.path.join(self.base, "munge", "munge.key")
        fd = os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.write(fd, os.urandom(1024))
        os.close(fd)
        self.spawn("munged", ["munged", "--foreground", f"--socket={self.socket}", f"--key-file={key}",
                              f"--pid-file={os.path.join(self.base, 'munge', 'munged.pid')}",
                              f"--seed-file={os.path.join(self.base, 'munge', 'munged.seed')}",
                              f"--log-file={self.log('munged.log')}"])

        def munge_works():
            encoded = subprocess.run(["munge", "-n", "-S", self.socket], capture_output=True)
            return encoded.returncode == 0 and subprocess.run(
                ["unmunge", "-S", self.socket], input=encoded.stdout, capture_output=True).returncode == 0
        self.wait_until("munge credential from munged", munge_works, 30)

        self.write_config()
        self.spawn("slurmctld", ["slurmctld", "-D", "-f", self.conf])
        self.wait_until("answer from slurmctld (scontrol ping)",
                        lambda: "UP" in self.command("scontrol", "ping", check=False).stdout, 60)
        self.spawn("slurmd", ["slurmd", "-D", "-f", self.conf])
        self.wait_until("idle node (sinfo)",
                        lambda: self.command("sinfo", "-h", "-N", "-o", "%t", check=False).stdout.strip() == "idle", 60)

    def write_config(self):
        node = self.command("slurmd", "-C").stdout.splitlines()[0]  # "NodeName=vm CPUs=2 ... RealMemory=24105"
        fields = dict(item.split("=", 1) for item in node.split())
        if int(fields.get("CPUs", "1")) < 2:
            self.fail(f"the tests run 2 tasks on one node; slurmd -C says: {node}")
        path = self.base
        slurmctld_port, slurmd_port = free_ports(2)
        with open(self.conf, "w") as f:
            f.write(f"""# Written by tests/python/test_slurm.py: a one-node cluster in {path}
ClusterName=opverifytest
SlurmctldHost=localhost
SlurmctldPort={slurmctld_port}
SlurmdPort={slurmd_port}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# cred_expire is also how long a requeued job waits before it may start again (default 120 s).
AuthInfo=socket={self.socket},cred_expire=10
CredType=cred/munge
StateSaveLocation={path}/state
SlurmdSpoolDir={path}/spool
SlurmctldPidFile={path}/slurmctld.pid
SlurmdPidFile={path}/slurmd.pid
SlurmctldLogFile={self.log('slurmctld.log')}
SlurmdLogFile={self.log('slurmd.log')}
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
InactiveLimit=0
KillWait=10
MinJobAge=600
{node} NodeAddr=127.0.0.1 State=UNKNOWN
PartitionName=opverify Nodes=ALL Default=YES MaxTime=INFINITE State=UP
""")

    def stop(self):
        """Cancels every job, stops the daemons (SIGTERM, then SIGKILL to
        their process groups) and ends any process a job left behind: those
        whose environment names this cluster's configuration."""
        if any(name == "slurmctld" and proc.poll() is None for name, proc in self.daemons):
            self.command("scancel", "--partition=opverify", check=False)
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and self.command("squeue", "-h", check=False).stdout.strip():
                time.sleep(0.5)
        for name, proc in reversed(self.daemons):
            try:
                os.killpg(proc.pid, signal.SIGTERM)
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            except ProcessLookupError:  # already gone
                proc.wait()
        marker = f"SLURM_CONF={self.conf}".encode()
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if marker in f.read().split(b"\0") and int(pid) != os.getpid():
                        os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.base, ignore_errors=True)

    # Jobs.
    def job(self, job_id):
        """{task id: {field: value}} from `scontrol show job -o` (one line per array task)."""
        proc = self.command("scontrol", "show", "job", "-o", str(job_id), check=False)
        tasks = {}
        for line in proc.stdout.splitlines():
            fields = dict(re.findall(r"(\w+)=(\S*)", line))
            tasks[fields.get("JobId")] = fields
        return tasks

    def wait_for(self, job_ids, outputs=(), timeout_s=JOB_WAIT_S):
        """Waits until every job (all tasks of an array) has ended."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            states = [t.get("JobState") for j in job_ids for t in self.job(j).values()]
            if states and all(s in DONE_STATES for s in states):
                return
            time.sleep(1)
        squeue = self.command("squeue", "-a", check=False).stdout
        logs = "\n".join(f"--- {p}\n{tail(p)}" for p in outputs)
        self.fail(f"jobs {job_ids} not done after {timeout_s} s:\n{squeue}\n{logs}")


@pytest.fixture(scope="module")
def cluster():
    c = Cluster()
    try:
        c.start()
        yield c
    finally:
        c.stop()


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    """opverify installed as a site would: cmake --install into a prefix."""
    path = tmp_path_factory.mktemp("prefix")
    proc = subprocess.run(["cmake", "--install", BUILD, "--prefix", str(path)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return path


@pytest.fixture(scope="module")
def reference(prefix, tmp_path_factory):
    """The same manifest under `mpirun -np 2` outside Slurm."""
    run_dir = tmp_path_factory.mktemp("mpirun") / "run"
    env = dict({k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}, **MPI_ENV)
    proc = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", str(prefix / "bin" / "opverify-batch"), MANIFEST,
                           "--backend", "cpu", "--run-dir", str(run_dir)], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 1, proc.stderr[-3000:]  # cpu_mixed fails in known ways
    v = verdicts(run_dir)
    assert len(v) == 20 and sum(passed for passed, _ in v.values()) == 16
    return v


def nightly_env(cluster, prefix, run_root, **settings):
    return dict(cluster.env, **MPI_ENV, OPVERIFY_PREFIX=str(prefix), MANIFEST=MANIFEST, RUN_ROOT=str(run_root),
                BACKEND="cpu", **settings)


def submit_nightly(cluster, env, *sbatch_flags):
    """slurm/submit-nightly for 2 CPU tasks: (sweep id, reduce id, run folder)."""
    proc = subprocess.run([os.path.join(SLURM, "submit-nightly"), "--ntasks-per-node=2", "--gpus-per-task=0",
                           *sbatch_flags], capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    if proc.returncode != 0:
        cluster.fail(f"submit-nightly exited with {proc.returncode}: {proc.stderr}")
    m = re.fullmatch(r"sweep (\d+), reduce (\d+), run folder (.+)", proc.stdout.strip())
    assert m, proc.stdout
    return m.group(1), m.group(2), m.group(3)


def outputs(run_dir):
    return sorted(glob.glob(os.path.join(run_dir, "slurm", "*.out")))


def one_task(cluster, job_id):
    (task,) = cluster.job(job_id).values()
    return task


def summary(run_dir):
    with open(os.path.join(run_dir, "summary.json")) as f:
        return json.load(f)


def wait_for_journaled_cases(run_dir, count, timeout_s=JOB_WAIT_S):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        lines = sum(open(j).read().count("\n") for j in glob.glob(os.path.join(run_dir, "shards", "*.journal")))
        if lines >= count:
            return
        time.sleep(0.1)
    pytest.fail(f"{run_dir}: fewer than {count} cases stored after {timeout_s} s")


def journaled_ids(run_dir):
    ids = []
    for journal in glob.glob(os.path.join(run_dir, "shards", "*.journal")):
        with open(journal) as f:
            ids += [json.loads(line)["case_id"] for line in f if line.endswith("\n")]
    return ids


@pytest.fixture(scope="module")
def first_night(cluster, prefix, tmp_path_factory):
    """Tonight's sweep with srun, through submit-nightly with its defaults."""
    run_root = tmp_path_factory.mktemp("nightly")
    before = datetime.date.today().isoformat()
    sweep, reduce, run_dir = submit_nightly(cluster, nightly_env(cluster, prefix, run_root))
    after = datetime.date.today().isoformat()
    cluster.wait_for([sweep, reduce], outputs(run_dir))
    return {"root": run_root, "dir": run_dir, "sweep": sweep, "reduce": reduce, "dates": {before, after}}


def test_srun_sweep_gives_the_verdicts_of_mpirun(cluster, first_night, reference):
    run_dir = first_night["dir"]
    assert os.path.basename(run_dir) in first_night["dates"]  # the run folder is named by date
    logs = "".join(tail(p, 200) for p in outputs(run_dir))
    sweep = one_task(cluster, first_night["sweep"])
    # cpu_mixed fails some cases by design: opverify-batch exits 1, the job FAILED.
    assert (sweep["JobState"], sweep["ExitCode"]) == ("FAILED", "1:0"), logs
    assert "srun --mpi=pmix" in logs
    assert verdicts(run_dir) == reference
    s = summary(run_dir)
    assert (s["launcher"], s["ranks"]) == ("srun", 2), logs
    assert "stopped_by_signal" not in s


def test_dependent_step_writes_the_reports(cluster, first_night):
    run_dir = first_night["dir"]
    reduce = one_task(cluster, first_night["reduce"])
    logs = "".join(tail(p, 200) for p in outputs(run_dir))
    assert reduce["Dependency"] == "(null)" and reduce["JobState"] == "COMPLETED", logs
    sweep = one_task(cluster, first_night["sweep"])
    assert reduce["StartTime"] >= sweep["EndTime"]  # after the sweep, as afterany says
    s = summary(run_dir)
    assert s["reduced_by"] == "opverify-reduce" and s["totals"]["cases"] == 20
    for report in ("report.html", "report.md", "junit.xml", "results.h5", "ops/nan_bad/verify_result.json"):
        assert os.path.exists(os.path.join(run_dir, report)), report
    assert "no baseline diff" in logs  # the first night has nothing to compare with
    assert not os.path.exists(os.path.join(run_dir, "baseline_diff.json"))


def test_mpirun_in_the_allocation_and_the_baseline_diff_of_the_next_night(cluster, prefix, first_night, reference):
    tomorrow = (datetime.date.fromisoformat(os.path.basename(first_night["dir"])) +
                datetime.timedelta(days=1)).isoformat()
    env = nightly_env(cluster, prefix, first_night["root"], LAUNCHER="mpirun", RUN_DATE=tomorrow)
    sweep, reduce, run_dir = submit_nightly(cluster, env)
    cluster.wait_for([sweep, reduce], outputs(run_dir))
    logs = "".join(tail(p, 200) for p in outputs(run_dir))
    assert run_dir == os.path.join(str(first_night["root"]), tomorrow)
    assert verdicts(run_dir) == reference, logs
    s = summary(run_dir)
    assert (s["launcher"], s["ranks"]) == ("mpirun", 2), logs
    # The reduce step compared with the previous night: same verdicts, so
    # nothing newly failing or fixed (speed may differ on a busy machine).
    assert f"--baseline {first_night['dir']}" in logs
    with open(os.path.join(run_dir, "baseline_diff.json")) as f:
        diff = json.load(f)
    assert diff["newly_failing"] == [] and diff["fixed"] == [], diff
    assert one_task(cluster, reduce)["JobState"] in ("COMPLETED", "FAILED")  # 1: slower, by noise
    # Both reduce steps appended their night to the history beside the dated folders (reduce.sbatch's
    # default --history), and the second night says since when its failing operators fail.
    assert f"--history {first_night['root']}/history.jsonl" in logs
    with open(os.path.join(str(first_night["root"]), "history.jsonl")) as f:
        history = [json.loads(line) for line in f]
    ops = sorted({case.split("/")[0] for case in reference})
    failing = sorted({case.split("/")[0] for case, (passed, _) in reference.items() if not passed})
    for night in (first_night["dir"], run_dir):
        lines = [line for line in history if line["run"] == night]
        assert sorted(line["op"] for line in lines) == ops, (night, lines)
        assert sorted(line["op"] for line in lines if line["verdict"] == "failed") == failing
        assert all(line["commit"] == s["opverify"]["commit"] for line in lines)
    first_date = next(line["date"] for line in history if line["run"] == first_night["dir"])
    assert s["history"]["earlier_nights"] == 1
    assert sorted(s["history"]["still_failing"], key=lambda streak: streak["op"]) == [
        {"op": op, "since": first_date, "nights": 2} for op in failing]
    assert s["history"]["newly_failing"] == [] and s["history"]["newly_passing"] == []
    with open(os.path.join(run_dir, "report.md")) as f:
        assert f"- still failing ({len(failing)}):" in f.read()


def test_a_job_array_splits_the_manifest_and_the_reduce_step_merges_it(cluster, prefix, tmp_path, reference):
    env = nightly_env(cluster, prefix, tmp_path, PARTS="2")
    sweep, reduce, run_dir = submit_nightly(cluster, env, "--ntasks-per-node=1")
    cluster.wait_for([sweep, reduce], outputs(run_dir))
    logs = "".join(tail(p, 200) for p in outputs(run_dir))
    tasks = cluster.job(sweep)
    assert len(tasks) == 2, tasks
    parts = [os.path.join(run_dir, "parts", f"{i}-of-2") for i in range(2)]
    seen = {}
    for i, part in enumerate(parts):
        s = summary(part)
        assert (s["part"], s["ranks"]) == (f"{i}/2", 1), logs
        seen[part] = set(verdicts(part))
    assert seen[parts[0]] and seen[parts[1]] and not seen[parts[0]] & seen[parts[1]]  # a real split
    assert verdicts(run_dir) == reference, logs
    s = summary(run_dir)
    assert s["merged_from"] == parts and s["ranks"] == 2 and s["reduced_by"] == "opverify-reduce"
    assert one_task(cluster, reduce)["JobState"] == "COMPLETED", logs


def test_requeue_resumes_without_running_stored_cases_again(cluster, prefix, tmp_path, reference):
    # nightly.sbatch on its own, as cron might submit it: no RUN_DATE, no RUN_DIR.
    env = nightly_env(cluster, prefix, tmp_path / "runs")
    out = tmp_path / "sweep.out"
    proc = subprocess.run(["sbatch", "--parsable", "--ntasks-per-node=2", "--gpus-per-task=0", f"--output={out}",
                           os.path.join(SLURM, "nightly.sbatch")], capture_output=True, text=True, env=env,
                          cwd=str(tmp_path), timeout=60)
    assert proc.returncode == 0, proc.stderr
    job_id = proc.stdout.strip()
    date_file = tmp_path / "runs" / ".job-dates" / job_id
    deadline = time.monotonic() + JOB_WAIT_S
    # The script creates the marker (noclobber) and then writes the date into it:
    # wait for the date, not only the file.
    while not (date_file.exists() and date_file.read_text().strip()) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert date_file.exists() and date_file.read_text().strip(), f"the job never started its sweep:\n{tail(out)}"
    run_dir = tmp_path / "runs" / date_file.read_text().strip()
    wait_for_journaled_cases(run_dir, 4)
    before = set(journaled_ids(run_dir))
    cluster.command("scontrol", "requeue", job_id)
    cluster.wait_for([job_id], [str(out)])
    log = tail(out, 400)
    job = one_task(cluster, job_id)
    assert job["Restarts"] == "1", log
    assert "start 2 (SLURM_RESTART_COUNT=1)" in log
    ids = journaled_ids(run_dir)
    # Cases and benchmark shapes run once. An item cut short stores its
    # item-level rows (operator facts, benchmark settings: ".../@operator/<item>",
    # ".../@bench-item/<item>") again when its start after the requeue finishes it.
    again = {i for i in ids if ids.count(i) > 1 and "/@operator/" not in i and "/@bench-item/" not in i}
    assert not again, f"stored before the requeue and run again: {again}"
    assert before <= set(ids)
    assert sorted(p.name for p in (run_dir / "shards").glob("rank-*.1.h5")) == ["rank-0000.1.h5", "rank-0001.1.h5"]
    assert verdicts(run_dir) == reference, log
    assert summary(run_dir)["resumed"] is True


@pytest.mark.parametrize("launcher", ["srun", "mpirun"])
def test_usr1_before_the_time_limit_writes_partial_reports(cluster, prefix, tmp_path, launcher):
    # What --signal=B:USR1@300 does five minutes before the limit: USR1 to
    # the batch script only (scancel --batch), which must pass it on.
    env = nightly_env(cluster, prefix, tmp_path, LAUNCHER=launcher)
    sweep, reduce, run_dir = submit_nightly(cluster, env)
    wait_for_journaled_cases(run_dir, 1)
    cluster.command("scancel", "--batch", "--signal=USR1", sweep)
    cluster.wait_for([sweep, reduce], outputs(run_dir))
    logs = "".join(tail(p, 200) for p in outputs(run_dir))
    assert f"SIGUSR1: passing it to {launcher}" in logs
    s = summary(run_dir)  # rewritten by the reduce step, which keeps what stopped the sweep
    assert s["reduced_by"] == "opverify-reduce"
    assert s["stopped_by_signal"] == "SIGUSR1" and s["unassigned_items"] > 0, logs
    assert 0 < s["totals"]["cases"] < 20
    assert one_task(cluster, sweep)["ExitCode"] == "1:0"  # not every case ran: not a pass


@pytest.mark.parametrize("how", ["usr1-to-the-script", "term-to-the-tasks", "term-to-every-process"])
def test_a_stop_under_srun_with_both_tasks_inside_ten_minute_cases(cluster, prefix, tmp_path, how):
    # Both tasks are inside cases that sleep for ten minutes when the sweep is
    # told to stop:
    # - usr1-to-the-script: the time-limit warning (--signal=B:USR1@300), which
    #   the script passes on to srun and srun to the tasks;
    # - term-to-the-tasks: `scancel --signal=TERM`, TERM to the step's tasks;
    # - term-to-every-process: `scancel --full --signal=TERM`, as at the time
    #   limit: srun gets TERM too, and srun answers TERM by SIGKILLing its
    #   tasks, so the dependent reduce step writes the reports.
    # Either way, complete reports of what is stored within STOP_WITHIN_S,
    # and no executor left behind.
    manifest = long_manifest(tmp_path / "long.json", sleeper_folders(tmp_path, 2))
    # The manifest's order (--schedule fifo): the quick operators have run when both tasks sleep.
    env = dict(nightly_env(cluster, prefix, tmp_path, LAUNCHER="srun", BATCH_FLAGS="--schedule fifo"),
               MANIFEST=str(manifest))
    sweep, reduce, run_dir = submit_nightly(cluster, env)
    run = pathlib.Path(run_dir)
    wait_for(lambda: all(sleeping(run, r) for r in range(2)), 240, "both tasks inside a sleeping case")
    before = sorted(c for c in journaled(run) if "/@" not in c and not c.endswith("@bench"))
    flags = {"usr1-to-the-script": ["--batch", "--signal=USR1"], "term-to-the-tasks": ["--signal=TERM"],
             "term-to-every-process": ["--full", "--signal=TERM"]}[how]
    cluster.command("scancel", *flags, sweep)
    started = time.monotonic()

    def reported():
        try:
            s = json.loads((run / "summary.json").read_text())
        except (OSError, ValueError):
            return False
        return "stopped_by_signal" in s or s.get("reduced_by") == "opverify-reduce"

    wait_for(reported, STOP_WITHIN_S, "summary.json of the stopped sweep")
    took = time.monotonic() - started
    cluster.wait_for([sweep, reduce], outputs(run_dir))
    logs = "".join(tail(p, 200) for p in outputs(run_dir))
    assert took < STOP_WITHIN_S, f"{took:.1f} s\n{logs}"
    if how == "term-to-every-process":
        assert "srun: forcing job termination" in logs, logs
        s = summary(run_dir)
        stored = sorted(c for c in journaled(run) if "/@" not in c and not c.endswith("@bench"))
        assert stored == before and s["totals"]["cases"] == len(stored), (s["totals"], stored)
        assert s["totals"]["failed"] == 0 and s["totals"]["lost"] > 0, s["totals"]  # no pass, no failure
        assert "quant_ok: no results stored (the run's plan has it)" in s["incomplete"], s["incomplete"]
        assert (run / "report.html").exists() and "quant_ok" in (run / "report.md").read_text()
    else:
        signame = "SIGUSR1" if how == "usr1-to-the-script" else "SIGTERM"
        assert_complete_partial_reports(run, signame, ["relu_ok", "transpose_ok"])
    assert not executors_of(run), "an executor outlived the sweep"
    assert one_task(cluster, sweep)["ExitCode"] != "0:0", logs  # not every case ran: not a pass
