"""Names, the gate and the run folder's state under hostile input, for real
on the cpu backend: a job name that would leave runs/, repro commands pasted
into sh from a folder named to inject code, escape sequences and markup in
error text, lost shards and journals that the gate must not pass, a baseline
operator gone missing, one writer per run folder (a live run, a killed one,
mpirun's ranks), and --resume rewriting lost operator-level rows."""
import json
import os
import re
import shutil
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

from test_batch import CPU_OPS, MPI_ENV, batch_bin, descendants  # noqa: F401 (a fixture)
from test_reduce import IMPL, RIGHT

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
REDUCE = os.path.join(BUILD, "reduce", "opverify-reduce")

RELU = open(os.path.join(CPU_OPS, "relu_ok_torch.py")).read()
HOSTILE_TEXT = "\\x1b]0;owned\\x07\\x1b[2J<script>alert(1)</script> <!-- x"
LOUD = f"        raise ValueError(\"{HOSTILE_TEXT}\")"


def make_ops(folder, bodies, name="hostile", **defaults):
    """Operators <op> in `folder` (relu's task, the given forward bodies) and a manifest naming them."""
    folder.mkdir(parents=True, exist_ok=True)
    for op, body in bodies.items():
        (folder / f"{op}_torch.py").write_text(RELU)
        (folder / f"{op}_cpu_impl.py").write_text(IMPL.format(body=body))
    defaults = {"impl_name": "cpu_impl", "lint": False, "bench": {"warmup": 1, "repeats": 3}, **defaults}
    manifest = folder / "jobs.json"
    manifest.write_text(json.dumps({"name": name, "defaults": defaults,
                                    "operators": [{"name": op, "dir": str(folder)} for op in bodies]}))
    return manifest


def batch(batch_bin, manifest, run_dir, *flags, cwd=None, ranks=None, wait=True):
    command = [batch_bin, str(manifest), "--backend", "cpu", "--no-ab", *flags]
    if run_dir is not None:
        command += ["--run-dir", str(run_dir)]
    if ranks:
        command = ["mpirun", "-np", str(ranks), "--oversubscribe", *command]
    env = dict(os.environ, **MPI_ENV)
    if not wait:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd, env=env)
    return subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


def reduce(*args):
    return subprocess.run([REDUCE, *map(str, args)], capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def finished(batch_bin, tmp_path_factory):  # noqa: F811
    """A finished run of two passing operators (benchmarked) and one that fails loudly."""
    base = tmp_path_factory.mktemp("finished")
    manifest = make_ops(base / "ops", {"alpha": RIGHT, "beta": RIGHT, "loud": LOUD})
    proc = batch(batch_bin, manifest, base / "run")
    assert proc.returncode == 1, proc.stderr[-3000:]  # loud fails by design
    return base / "run", proc


def copy_run(run, tmp_path):
    shutil.copytree(run, tmp_path / "copy")
    return tmp_path / "copy"


# ---- Paths and shell --------------------------------------------------------

def test_a_job_name_never_picks_a_folder_outside_runs(batch_bin, tmp_path):  # noqa: F811
    deep = tmp_path / "a" / "b" / "c" / "d"
    deep.mkdir(parents=True)
    leaf = r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}-\d{8}T\d{6}Z"
    for name in ("evil\u0000name", "n" * 300, "/abs/path", ".hidden", "-rf", "a/../../b"):
        manifest = make_ops(tmp_path / "ops", {"alpha": RIGHT}, name=name)
        proc = batch(batch_bin, manifest, None, "--dry-run", cwd=deep)
        assert proc.returncode == 0, (name, proc.stderr[-2000:])
        folder = re.search(r"run folder (.*)$", proc.stdout, re.M).group(1)
        assert os.path.dirname(folder) == str(deep / "runs") and re.fullmatch(leaf, os.path.basename(folder)), folder
    manifest = make_ops(tmp_path / "ops", {"alpha": RIGHT}, name="../../../../X")
    proc = batch(batch_bin, manifest, None, "--no-bench", cwd=deep)  # for real
    assert proc.returncode == 0, proc.stderr[-2000:]
    made = sorted(os.listdir(deep / "runs"))  # the run folder and runs/latest, a relative link to it
    assert len(made) == 2 and made[0].startswith("X-") and re.fullmatch(leaf, made[0]), made
    assert made[1] == "latest" and os.readlink(deep / "runs" / "latest") == made[0]
    assert (deep / "runs" / made[0] / "summary.json").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "ops"]  # nothing written beside


def paste(command, cwd):
    """`command` run by sh with `opverify` a function printing its arguments NUL-terminated."""
    script = "opverify() { for a in \"$@\"; do printf '%s\\0' \"$a\"; done; }\n" + command + "\n"
    proc = subprocess.run(["/bin/sh", "-c", script], capture_output=True, cwd=cwd, timeout=30)
    assert proc.returncode == 0, proc.stderr
    return [a.decode() for a in proc.stdout.split(b"\0")[:-1]]


def test_repro_lines_from_an_injection_folder_are_only_data(batch_bin, tmp_path):  # noqa: F811
    folder = tmp_path / "x'; touch INJECTED; echo '"
    manifest = make_ops(folder, {"loud": LOUD})
    run = tmp_path / "run"
    proc = batch(batch_bin, manifest, run, "--no-bench")
    assert proc.returncode == 1, proc.stderr[-2000:]
    md = (run / "report.md").read_text()
    blocks = re.findall(r"```sh\n(.*?)\n```", md, re.S)
    md_triage = re.findall(r"^\| loud \|.*\| `(opverify verify .*)` \|$", md, re.M)  # "Failing operators"
    junit = ET.parse(run / "junit.xml").getroot()
    prop = [p.get("value") for p in junit.iter("property") if p.get("name") == "repro"]
    html = (run / "report.html").read_text()

    def code_in(table):
        return re.findall(r"<td><code>(.*?)</code></td>", re.search(rf'<table id="{table}">.*?</table>', html, re.S)[0],
                          re.S)
    code, html_triage = code_in("failures"), code_in("failing-operators")
    import html as html_lib
    lines = blocks + prop + [html_lib.unescape(c) for c in code]
    triage = md_triage + [html_lib.unescape(c) for c in html_triage]  # the first failing case's repro
    assert len(blocks) == 1 and len(prop) == 1 and len(code) == 4, lines  # html: one per failing case
    assert len(md_triage) == 1 and len(html_triage) == 1, triage  # one row per failing operator
    assert len(re.findall(r"<td><code>", html)) == len(code) + len(html_triage)  # no repro left unchecked
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    for line in lines + triage:
        args = paste(line, scratch)
        assert args[:3] == ["verify", "--op_name", "loud"]
        assert args[args.index("--verify_dir") + 1] == str(folder)
        assert not (scratch / "INJECTED").exists() and not (tmp_path / "INJECTED").exists()
    for line in triage:
        assert paste(line, scratch)[-4:] == ["--case", "1", "--output", "/tmp/repro-loud/"]


def test_markup_and_escapes_in_error_text_reach_no_renderer_or_terminal(finished):
    run, proc = finished
    assert "\x1b" not in proc.stderr and "\x07" not in proc.stderr
    assert "alert(1)" in (run / "logs" / "rank-0000.log").read_text()  # the text itself is kept
    for path in (run / "report.md", run / "ops" / "loud" / "precision_report.md", run / "logs" / "rank-0000.log"):
        text = path.read_text()
        assert "\x1b" not in text and "\x07" not in text, path
    md = (run / "report.md").read_text()
    assert "<script" not in md and "<!--" not in md
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in md and "&lt;!-- x" in md


# ---- The gate can lie -------------------------------------------------------

def test_a_finished_run_passes_the_gate_and_says_so(finished, tmp_path):
    run = copy_run(finished[0], tmp_path)
    proc = reduce(run)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert summary["totals"]["lost"] == 0 and summary["incomplete"] == [] and summary["problems"] == []
    assert json.loads((run / "plan.json").read_text())["operators"] == [
        {"name": "alpha", "min_cases": 0}, {"name": "beta", "min_cases": 0}, {"name": "loud", "min_cases": 0}]


def test_an_unreadable_shard_is_exit_3_naming_it_and_the_reports_say_so(finished, tmp_path):
    run = copy_run(finished[0], tmp_path)
    shard = next((run / "shards").glob("rank-0000*.h5"))
    shard.write_bytes(b"\0" * 4096)  # garbage where the shard was
    proc = reduce(run)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert shard.name in proc.stderr and "RESULTS LOST" in proc.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert summary["totals"]["lost"] >= 1 and any(shard.name in p for p in summary["problems"])
    assert {"alpha: no results stored (the run's plan has it)"} <= set(summary["incomplete"])
    junit = ET.parse(run / "junit.xml").getroot()
    assert int(junit.get("errors")) >= 2 and int(junit.get("tests")) >= 2  # never tests="0" errors="0"
    check = subprocess.run(["xmllint", "--noout", "--schema", os.path.join(ROOT, "schemas", "junit.xsd"),
                            str(run / "junit.xml")], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    assert "## Lost results" in (run / "report.md").read_text()
    assert 'id="lost"' in (run / "report.html").read_text()


def test_a_lost_journal_is_exit_3_naming_every_planned_operator(finished, tmp_path):
    run = copy_run(finished[0], tmp_path)
    (run / "shards" / "rank-0000.journal").unlink()
    proc = reduce(run)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert sorted(line.split(":")[0] for line in summary["incomplete"]) == ["alpha", "beta", "loud"]
    assert summary["totals"]["cases"] == 0 and summary["totals"]["lost"] == 3


def test_a_journal_that_is_a_folder_is_named_not_an_abort(finished, batch_bin, tmp_path):  # noqa: F811
    run = copy_run(finished[0], tmp_path)
    journal = run / "shards" / "rank-0000.journal"
    journal.unlink()
    journal.mkdir()
    proc = reduce(run)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "rank-0000.journal" in proc.stderr and "not a regular file" in proc.stderr
    resumed = batch(batch_bin, json.loads((run / "summary.json").read_text())["manifest"], run, "--resume")
    assert resumed.returncode == 2, resumed.stderr[-2000:]
    assert "rank-0000.journal" in resumed.stderr and "terminate" not in resumed.stderr


def test_a_missing_operator_of_the_baseline_is_a_regression_unless_allowed(finished, batch_bin, tmp_path):  # noqa: F811
    before = finished[0]
    after = tmp_path / "after"
    manifest = json.loads((before / "summary.json").read_text())["manifest"]
    proc = batch(batch_bin, manifest, after, "--filter", "[al]*", "--no-bench")  # beta is gone
    assert proc.returncode == 1, proc.stderr[-2000:]
    gate = reduce(after, "--baseline", before)
    assert gate.returncode == 1, gate.stdout + gate.stderr
    assert "missing: beta" in gate.stdout and "REGRESSED" in gate.stdout
    assert json.loads((after / "baseline_diff.json").read_text())["missing"] == ["beta"]
    allowed = reduce(after, "--baseline", before, "--allow-missing")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert "missing (allowed): beta" in allowed.stdout


def test_the_batch_itself_never_passes_a_run_whose_results_vanished(batch_bin, tmp_path):  # noqa: F811
    # An implementation that deletes the rank's journal while it runs.
    vandal = ("        import os\n"
              "        j = os.path.normpath(os.path.join(os.environ['TRITON_CACHE_DIR'], '..', '..', '..', 'shards',\n"
              "                                          'rank-0000.journal'))\n"
              "        if os.path.exists(j):\n            os.unlink(j)\n" + RIGHT)
    manifest = make_ops(tmp_path / "ops", {"vandal": vandal})
    run = tmp_path / "run"
    proc = batch(batch_bin, manifest, run, "--no-bench")
    if (run / "shards" / "rank-0000.journal").exists():
        pytest.skip("the implementation could not reach the store (the executor's sandbox protects it)")
    assert proc.returncode == 1, proc.stderr[-2000:]
    junit = ET.parse(run / "junit.xml").getroot()
    assert junit.get("tests") != "0" and int(junit.get("errors")) >= 1
    assert "vandal: no results stored" in " ".join(json.loads((run / "summary.json").read_text())["incomplete"])


# ---- State: one writer per run folder ---------------------------------------

GATED = ("        import os\n"
         "        gate = {gate!r}\n"
         "        while not os.path.exists(gate):\n            time.sleep(0.05)\n" + RIGHT)


def wait_for(predicate, timeout=120):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return False


def lock_record(run):
    try:
        text = (run / "run.lock").read_text()
        return json.loads(text) if text else None
    except (OSError, ValueError):
        return None


def test_a_live_run_folder_has_one_writer(batch_bin, tmp_path):  # noqa: F811
    gate = tmp_path / "gate"
    manifest = make_ops(tmp_path / "ops", {"held": GATED.format(gate=str(gate))})
    run = tmp_path / "run"
    first = batch(batch_bin, manifest, run, "--no-bench", wait=False)
    executors = []
    try:
        assert wait_for(lambda: (run / "shards").exists() and lock_record(run)), "the first run never started"
        holder = lock_record(run)
        assert holder["pid"] == first.pid and holder["program"] == "opverify-batch"
        second = batch(batch_bin, manifest, run, "--no-bench", "--resume")
        assert second.returncode == 2
        assert f"in use by pid {first.pid} on host {holder['host']}" in second.stderr, second.stderr
        live = reduce(run)
        assert live.returncode == 2 and f"in use by pid {first.pid}" in live.stderr, live.stderr
        executors = descendants(first.pid)
        first.send_signal(signal.SIGKILL)  # a holder that dies leaves its record behind
        first.wait(timeout=60)
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        for pid in executors[1:]:  # the killed rank's executors (a sandbox ends them itself)
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    assert lock_record(run)["pid"] == first.pid
    gate.write_text("go")
    resumed = batch(batch_bin, manifest, run, "--no-bench", "--resume")
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert f"broke the stale lock of pid {first.pid}" in resumed.stderr
    assert (run / "run.lock").read_text() == ""  # released
    journal = (run / "shards" / "rank-0000.journal").read_text().splitlines()
    ids = [json.loads(line)["case_id"] for line in journal]
    assert len([i for i in ids if "/@" not in i]) == 4  # each case once: no second writer ran them


def test_under_mpirun_only_rank_0_holds_the_lock(batch_bin, tmp_path):  # noqa: F811
    manifest = make_ops(tmp_path / "ops", {"alpha": RIGHT, "beta": RIGHT})
    run = tmp_path / "run"
    proc = batch(batch_bin, manifest, run, "--no-bench", ranks=2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (run / "run.lock").read_text() == ""
    assert "in use by" not in proc.stderr
    assert len(list((run / "shards").glob("rank-0001*.h5"))) >= 1  # rank 1 wrote its own shard


def test_resume_rewrites_lost_operator_level_rows(finished, batch_bin, tmp_path):  # noqa: F811
    run = copy_run(finished[0], tmp_path)
    before = json.loads((run / "ops" / "alpha" / "verify_result.json").read_text())
    assert {"device", "torch"} <= set(before["environment"])  # from its @operator row
    perf_before = json.loads((run / "ops" / "alpha" / "perf_result.json").read_text())
    journal = run / "shards" / "rank-0000.journal"
    lines = journal.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not re.search(r'"alpha/@(operator|bench-item)/', line)]
    assert len(kept) == len(lines) - 2
    journal.write_text("".join(kept))
    assert reduce(run).returncode == 0
    assert "device" not in json.loads((run / "ops" / "alpha" / "verify_result.json").read_text())["environment"]
    manifest = json.loads((run / "summary.json").read_text())["manifest"]
    resumed = batch(batch_bin, manifest, run, "--resume")
    assert resumed.returncode == 1, resumed.stderr[-2000:]  # loud still fails
    after = json.loads((run / "ops" / "alpha" / "verify_result.json").read_text())
    assert set(after["environment"]) == set(before["environment"])
    assert after["environment"]["device"] == before["environment"]["device"]
    perf_after = json.loads((run / "ops" / "alpha" / "perf_result.json").read_text())
    assert set(perf_after) == set(perf_before)
    ids = [json.loads(line)["case_id"] for line in journal.read_text().splitlines()]
    assert sum(i.startswith("alpha/@operator/") for i in ids) == 1
    assert sum(i.startswith("alpha/@bench-item/") for i in ids) == 1
    assert sum(i.startswith("beta/@operator/") for i in ids) == 1  # not lost, not written again


# ---- Any verdict reaches every report (issue 25 item 3) ----------------------

HOSTILE = os.path.join(ROOT, "tests", "fixtures", "hostile")


def hostile_ops(tmp_path, ops, **defaults):
    """A manifest of fixtures of tests/fixtures/hostile and relu-like operators of `make_ops`."""
    folder = tmp_path / "ops"
    shutil.copytree(HOSTILE, folder)
    manifest = make_ops(folder, {"alpha": RIGHT}, **defaults)
    job = json.loads(manifest.read_text())
    job["operators"] += [{"name": op, "dir": str(folder)} for op in ops]
    manifest.write_text(json.dumps(job))
    return manifest


@pytest.mark.parametrize("ranks", [None, 2])
def test_a_wrong_shaped_output_fails_its_case_and_every_report_is_written(batch_bin, tmp_path, ranks):  # noqa: F811
    manifest = hostile_ops(tmp_path, ["short_output"])
    run = tmp_path / "run"
    proc = batch(batch_bin, manifest, run, "--no-bench", ranks=ranks)
    assert proc.returncode == 1, proc.stderr[-3000:]  # used to be 134: json type_error.306 while writing reports
    assert "terminate called" not in proc.stderr
    assert re.search(r"FAILED short_output/#1\s+ShapeMismatch", proc.stdout), proc.stdout
    summary = json.loads((run / "summary.json").read_text())
    assert summary["error_types"] == {"ShapeMismatch": 1} and summary["totals"]["failed"] == 1
    assert summary["problems"] == [] and summary["incomplete"] == []
    for name in ("report.md", "report.html", "junit.xml", "ops/short_output/precision_report.md",
                 "ops/short_output/verify_result.json", "ops/alpha/verify_result.json"):
        assert (run / name).is_file(), name
    assert "| ShapeMismatch |" in (run / "ops" / "short_output" / "precision_report.md").read_text()
    junit = ET.parse(run / "junit.xml").getroot()
    assert [f.get("type") for f in junit.iter("failure")] == ["ShapeMismatch"]
    assert (run / "run.lock").read_text() == ""  # released
    # The judge's null metrics are stored as they are, and opverify-reduce reads them back.
    import h5py
    with h5py.File(next((run / "shards").glob("rank-*.h5")), "r") as f:
        outputs = [json.loads(g.attrs["outputs"]) for g in f["cases"].values() if g.attrs["op_name"] == "short_output"]
    assert outputs and outputs[0][0]["metrics"] is None
    (run / "report.md").unlink()
    again = reduce(run)
    assert again.returncode == 0, again.stderr[-2000:]  # reports written, nothing lost
    assert "ShapeMismatch" in (run / "report.md").read_text()


# ---- Damaged state gets a clear error naming the file (item 5) ---------------

def corrupt_shard(shard):
    """Overwrites the shard with a file that crashes libhdf5 once its groups are walked."""
    shutil.copy(os.path.join(ROOT, "tests", "fixtures", "corrupt_h5", "local-heap-crash.h5"), shard)


@pytest.mark.parametrize("damage", ["crashing", "fifo", "symlink"])
def test_a_damaged_shard_is_a_problem_naming_it_for_reduce_and_resume(finished, batch_bin, tmp_path, damage):  # noqa: F811
    run = copy_run(finished[0], tmp_path)
    shard = next((run / "shards").glob("rank-0000*.h5"))
    if damage == "crashing":
        corrupt_shard(shard)
    elif damage == "fifo":
        shard.unlink()
        os.mkfifo(shard)
    else:
        target = tmp_path / "elsewhere.h5"
        shutil.move(shard, target)
        shard.symlink_to(target)
    proc = reduce(run)  # used to segfault (crashing) or wait forever (fifo)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    why = {"crashing": "reading it crashed its reader", "fifo": "not a regular file",
           "symlink": "a symbolic link"}[damage]
    assert shard.name in proc.stderr and why in proc.stderr, proc.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert any(shard.name in p and why in p for p in summary["problems"]), summary["problems"]
    assert (run / "junit.xml").is_file() and (run / "report.html").is_file()
    manifest = summary["manifest"]
    resumed = batch(batch_bin, manifest, run, "--resume", "--no-bench")
    assert resumed.returncode == 1, resumed.stderr[-2000:]  # the lost cases run again; loud fails
    assert "terminate called" not in resumed.stderr
    assert shard.name in resumed.stderr
    summary = json.loads((run / "summary.json").read_text())
    assert summary["totals"]["cases"] == 12 and summary["totals"]["failed"] == 4, summary["totals"]


@pytest.mark.parametrize("target", ["/dev/zero", "/dev/null"])
def test_a_journal_linked_to_a_device_is_refused_not_written_through(finished, batch_bin, tmp_path, target):  # noqa: F811
    run = copy_run(finished[0], tmp_path)
    journal = run / "shards" / "rank-0000.journal"
    journal.unlink()
    journal.symlink_to(target)
    proc = reduce(run)
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "rank-0000.journal" in proc.stderr and "symbolic link" in proc.stderr
    manifest = json.loads((run / "summary.json").read_text())["manifest"]
    resumed = batch(batch_bin, manifest, run, "--resume", "--no-bench")  # used to journal into the device
    assert resumed.returncode == 2, resumed.stderr[-2000:]
    assert "rank-0000.journal" in resumed.stderr and "symbolic link" in resumed.stderr
    assert journal.is_symlink() and os.readlink(journal) == target


def test_report_temporaries_and_run_files_never_follow_a_planted_link_or_wait_on_a_fifo(finished, tmp_path):
    run = copy_run(finished[0], tmp_path)
    victims = []
    for name in ("summary.json", "report.md", "report.html", "junit.xml", "ops/alpha/verify_result.json"):
        victim = tmp_path / ("victim-" + name.replace("/", "-"))
        victim.write_text("keep me")
        victims.append(victim)
        planted = run / (name + ".tmp")
        planted.symlink_to(victim)
    fifo = run / "ops" / "beta" / "precision_report.md.tmp"
    os.mkfifo(fifo)
    (run / "selection.json").unlink()
    os.mkfifo(run / "selection.json")  # read with an ifstream, it used to hang the reducer
    proc = reduce(run)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "selection.json: selection file is a FIFO" in proc.stderr, proc.stderr
    assert all(v.read_text() == "keep me" for v in victims)
    assert json.loads((run / "summary.json").read_text())["totals"]["cases"] == 12
    assert not list(run.rglob("*.tmp"))


# ---- Stop signals and sweeps (item 6) ----------------------------------------

@pytest.mark.parametrize("signame", ["SIGINT", "SIGHUP"])
def test_ctrl_c_or_a_hangup_stops_a_single_rank_run_with_reports(batch_bin, tmp_path, signame):  # noqa: F811
    gate = tmp_path / "gate"
    bodies = {"first": RIGHT, **{f"held{i}": GATED.format(gate=str(gate)) for i in range(3)}}
    manifest = make_ops(tmp_path / "ops", bodies)
    run = tmp_path / "run"
    proc = batch(batch_bin, manifest, run, "--no-bench", wait=False)
    try:
        journal = run / "shards" / "rank-0000.journal"
        assert wait_for(lambda: journal.exists() and "first/#" in journal.read_text()), "nothing ran"
        proc.send_signal(getattr(signal, signame))
        started = time.monotonic()
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert time.monotonic() - started < 15, "the run did not stop soon after the signal"
    assert proc.returncode == 1, err[-3000:]  # used to die of the signal: no reports, a stale lock
    summary = json.loads((run / "summary.json").read_text())
    assert summary["stopped_by_signal"] == signame
    assert summary["totals"]["failed"] == 0 and summary["totals"]["passed"] >= 1
    assert (run / "report.html").is_file() and (run / "junit.xml").is_file()
    assert f"stopped by {signame}" in out.strip().splitlines()[-1]
    assert (run / "run.lock").read_text() == ""
