"""opverify-batch's console for real (mpirun -np 2 on the cpu backend): the
progress lines name the operators in flight and count failures without
repeating themselves, the FAILED list at the end is exactly the run's failed
cases (also when a stop signal ends the run early), -q prints no progress,
-v names each case, and --progress jsonl gives one JSON object per case whose
ids are the run's. Case ids are read from the run's own outputs."""
import json
import re
import signal
import subprocess
import os

import pytest

from test_batch import CPU_OPS, MPI_ENV, MIXED, batch_bin, run_batch, verdicts, write_manifest  # noqa: F401
from test_hostile_state import HOSTILE_TEXT, make_ops
from test_long_cases import journaled, sleeping, wait_for

PROGRESS = re.compile(r"^\[[^\]]*%\] (\d+) failed( · (.*))? · [\d:]+ elapsed")
FAST = ["--no-ab", "--no-bench"]


def failed_list(stdout):
    """(case id, error type) of each FAILED line the run printed at its end."""
    out = []
    for line in stdout.splitlines():
        if line.startswith("FAILED "):
            case_id, error = line[len("FAILED "):].split("  ")[:2]
            out.append((case_id, error))
    return out


def progress_lines(stderr):
    return [line for line in stderr.splitlines() if PROGRESS.match(line)]


def json_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


@pytest.fixture(scope="module")
def mixed_run(batch_bin, tmp_path_factory):  # noqa: F811
    folder = tmp_path_factory.mktemp("console")
    manifest = write_manifest(folder / "mixed.json", MIXED)
    proc = run_batch(batch_bin, manifest, folder / "run", *FAST, "--progress-interval", "0",
                     "--progress", f"jsonl={folder / 'cases.jsonl'}", ranks=2)
    return folder, proc


def test_progress_lines_name_the_operators_in_flight_and_count_failures(mixed_run):
    folder, proc = mixed_run
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = progress_lines(proc.stderr)
    assert len(lines) >= 3, proc.stderr[-3000:]
    named = set()
    for line in lines:
        flight = PROGRESS.match(line).group(3) or ""
        for part in flight.split(", "):
            if ": " in part:
                ranks, op = part.split(": ")
                assert re.fullmatch(r"ranks? [01](,[01])?", ranks), line
                named.add(op)
    assert named and named <= set(MIXED), named
    counts = [int(PROGRESS.match(line).group(1)) for line in lines]
    assert counts == sorted(counts)  # failures so far only grow
    summary = json.loads((folder / "run" / "summary.json").read_text())
    assert counts[-1] == summary["totals"]["failed"] > 0
    cases = summary["totals"]["cases"]
    assert lines[-1].endswith(", done") and f"[{cases}/{cases} 100.0%]" in lines[-1], lines[-1]
    # A line is printed when something changed: never twice the same state in a row.
    states = [line.split(" · ")[:-1] for line in lines[:-1]]
    assert all(a != b for a, b in zip(states, states[1:])), lines


def test_the_failed_list_is_exactly_the_runs_failed_cases(mixed_run):
    folder, proc = mixed_run
    listed = failed_list(proc.stdout)
    failed = {case: error for case, (passed, error) in verdicts(folder / "run").items() if not passed}
    assert sorted(listed) == sorted(failed.items()), proc.stdout
    summary = json.loads((folder / "run" / "summary.json").read_text())
    assert sorted(c for c, _ in listed) == sorted(f["case_id"] for f in summary["failures"])
    report = (folder / "run" / "report.md").read_text()
    for case_id, _ in listed:
        assert case_id in report
    last = proc.stdout.strip().splitlines()[-1]
    assert last.startswith(f"{len(MIXED)} operators, {summary['totals']['cases']} cases:"), last
    assert f"{len(listed)} failed" in last


def test_reduce_lists_the_same_failed_cases(mixed_run):
    from conftest import BUILD
    folder, proc = mixed_run
    reduced = subprocess.run([os.path.join(BUILD, "reduce", "opverify-reduce"), str(folder / "run")],
                             capture_output=True, text=True, timeout=300)
    assert reduced.returncode == 0, reduced.stderr[-3000:]
    assert failed_list(reduced.stdout) == failed_list(proc.stdout) != []


def test_progress_jsonl_file_has_one_object_per_case_of_the_run(mixed_run):
    folder, proc = mixed_run
    rows = [json.loads(line) for line in (folder / "cases.jsonl").read_text().splitlines()]
    stored = verdicts(folder / "run")
    assert sorted(r["case_id"] for r in rows) == sorted(stored)  # each case once, the run's ids
    for r in rows:
        assert r["op"] == r["case_id"].split("/")[0] and r["rank"] in (0, 1)
        assert (r["verdict"] == "passed") == stored[r["case_id"]][0]
        assert (r["error_type"] or "") == stored[r["case_id"]][1]
        assert r["wall_ms"] >= 0 and r["time"].endswith("Z")
    assert {r["rank"] for r in rows} == {0, 1}
    assert not json_lines(proc.stderr)  # jsonl=FILE: the objects go to the file only


def test_quiet_prints_no_progress_only_the_failures_and_the_totals(batch_bin, tmp_path):  # noqa: F811
    manifest = write_manifest(tmp_path / "mixed.json", MIXED)
    proc = run_batch(batch_bin, manifest, tmp_path / "run", *FAST, "-q", "--progress-interval", "0", ranks=2)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert not progress_lines(proc.stderr) and "[warning]" not in proc.stderr, proc.stderr[-3000:]
    failed = sorted(c for c, (passed, _) in verdicts(tmp_path / "run").items() if not passed)
    assert sorted(c for c, _ in failed_list(proc.stdout)) == failed
    lines = proc.stdout.strip().splitlines()
    assert len(lines) == len(failed) + 1 and " cases: " in lines[-1], proc.stdout


def test_progress_jsonl_on_stderr_and_verbose_lines_name_each_case(batch_bin, tmp_path):  # noqa: F811
    ops = ["relu_ok", "nan_bad", "crash_second_case"]
    manifest = write_manifest(tmp_path / "some.json", ops)
    proc = run_batch(batch_bin, manifest, tmp_path / "run", *FAST, "--progress", "jsonl", "-v", ranks=2)
    assert proc.returncode == 1, proc.stderr[-3000:]
    stored = verdicts(tmp_path / "run")
    rows = json_lines(proc.stderr)
    assert sorted(r["case_id"] for r in rows) == sorted(stored)
    assert not progress_lines(proc.stderr)  # one stream on stderr: no text progress line
    for case_id, (passed, error) in stored.items():
        word = "PASSED" if passed else "FAILED"
        shown = [line for line in proc.stderr.splitlines() if line.startswith(f"{word} {case_id} ")
                 or line.startswith(f"{word} {case_id}  {error}  ")]
        assert len(shown) == 1, (case_id, proc.stderr[-3000:])


def test_hostile_error_text_reaches_the_console_without_escapes(batch_bin, tmp_path):  # noqa: F811
    manifest = make_ops(tmp_path / "ops", {"loud": f"        raise ValueError(\"{HOSTILE_TEXT}\")"})
    jsonl = tmp_path / "cases.jsonl"
    proc = run_batch(batch_bin, manifest, tmp_path / "run", *FAST, "-v", "--progress", f"jsonl={jsonl}")
    assert proc.returncode == 1, proc.stderr[-3000:]
    for text in (proc.stdout, proc.stderr):
        assert "\x1b" not in text and "\x07" not in text
    listed = [line for line in proc.stdout.splitlines() if line.startswith("FAILED loud/")]
    assert listed and all("alert(1)" in line for line in listed), proc.stdout
    raw = jsonl.read_text()
    assert "\x1b" not in raw
    for line in raw.splitlines():  # each a valid object, its message the terminal-safe text
        message = json.loads(line)["message"]
        assert "alert(1)" in message and "\x1b" not in message and "\x07" not in message


def test_a_stopped_run_still_lists_its_failures(batch_bin, tmp_path):  # noqa: F811
    manifest = tmp_path / "stop.json"
    manifest.write_text(json.dumps({"name": "stop", "defaults": {"impl_name": "cpu_impl", "lint": False},
                                    "operators": [{"name": "nan_bad", "dir": CPU_OPS},
                                                  {"name": "sleep_long", "dir": CPU_OPS, "sweep": {"n": [1, 2, 3]},
                                                   "timeout_s": 1200}]}))
    run_dir = tmp_path / "run"
    # The manifest's order (--schedule fifo): nan_bad has run when the sleeping case is seen.
    proc = subprocess.Popen([batch_bin, str(manifest), "--backend", "cpu", "--run-dir", str(run_dir), *FAST,
                             "--schedule", "fifo"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **MPI_ENV))
    try:
        wait_for(lambda: sleeping(run_dir, 0), 120, "the sleeping case")
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 1, err[-3000:]
    failed = sorted(c for c, (passed, _) in verdicts(run_dir).items() if not passed)
    assert failed and all(c.startswith("nan_bad/") for c in failed)
    assert sorted(c for c, _ in failed_list(out)) == failed, out
    assert "stopped by SIGTERM" in out.strip().splitlines()[-1], out
    assert len([c for c in journaled(run_dir) if "/@" not in c]) == len(verdicts(run_dir))


def test_verify_lists_its_failed_cases_as_verify_result_numbers_them(tmp_path):
    from conftest import BUILD
    output = tmp_path / "verify_result.json"
    proc = subprocess.run([os.path.join(BUILD, "runner", "opverify"), "verify", "--op_name", "crash_second_case",
                           "--verify_dir", CPU_OPS, "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint",
                           "--seeds", "1", "--output", str(output)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-3000:]
    result = json.loads(output.read_text())
    listed = failed_list(proc.stdout)
    assert listed == [(f"crash_second_case case {f['case_idx']}", f["error_type"]) for f in result["failures"]]
    assert proc.stdout.strip().splitlines()[-1].startswith("crash_second_case: ")


def test_a_progress_file_that_cannot_be_opened_is_refused_before_the_run(batch_bin, tmp_path):  # noqa: F811
    manifest = write_manifest(tmp_path / "one.json", ["relu_ok"])
    proc = run_batch(batch_bin, manifest, tmp_path / "run", "--progress", f"jsonl={tmp_path / 'no' / 'x.jsonl'}",
                     ranks=2, timeout=120)
    assert proc.returncode != 0 and "--progress jsonl=" in proc.stderr and "cannot open" in proc.stderr
    assert not (tmp_path / "run").exists()
    bad = run_batch(batch_bin, manifest, tmp_path / "run", "--progress", "yaml", timeout=60)
    assert bad.returncode == 2 and "expected text, jsonl, jsonl=FILE or none" in bad.stderr
