"""pytest's small comforts in opverify's console (issue 26 item 6), for real:
colour on a terminal and never with NO_COLOR, in a pipe or under mpirun;
"did you mean" for a mistyped flag, subcommand or operator; the report's
file:// link on the last line; runs/latest for --rerun-failed; and a quiet
end under `mpirun -q -np 2`: one summary, from the reducer rank, and no Open
MPI banner after an ordinary failing night."""
import json
import os
import pty
import re
import select
import subprocess

from test_batch import MPI_ENV, batch_bin  # noqa: F401

from night_ab import make_night

BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
FAST = ["--backend", "cpu", "--no-ab", "--no-bench"]
ESCAPE = "\x1b["


def in_a_terminal(command, env, cwd, timeout=300):
    """Runs `command` with its stdout and stderr on a pseudo-terminal; (exit code, output)."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen(command, stdout=follower, stderr=follower, stdin=subprocess.DEVNULL, env=env, cwd=cwd)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], timeout)
        if not ready:
            proc.kill()
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # EIO: the program closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(leader)
    return proc.wait(timeout=timeout), b"".join(chunks).decode(errors="replace")


def test_colour_on_a_terminal_never_with_no_color_or_in_a_pipe(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["ok", "raises"], cases=2)
    env = dict(os.environ, TERM="xterm")
    env.pop("NO_COLOR", None)
    code, out = in_a_terminal([batch_bin, manifest, *FAST, "--run-dir", str(tmp_path / "a")], env, tmp_path)
    assert code == 1, out
    assert f"{ESCAPE}31mFAILED{ESCAPE}0m raises_0001/" in out
    assert f"{ESCAPE}31m2 failed{ESCAPE}0m" in out and f"{ESCAPE}32m2 passed{ESCAPE}0m" in out
    code, out = in_a_terminal([batch_bin, manifest, *FAST, "--run-dir", str(tmp_path / "b")],
                              dict(env, NO_COLOR="1"), tmp_path)
    assert code == 1 and ESCAPE + "3" not in out and "FAILED raises_0001/" in out
    piped = subprocess.run([batch_bin, manifest, *FAST, "--run-dir", str(tmp_path / "c")], capture_output=True,
                           text=True, env=env, timeout=300)
    assert piped.returncode == 1 and ESCAPE not in piped.stdout and "FAILED raises_0001/" in piped.stdout


def test_did_you_mean_for_flags_subcommands_and_operators(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["ok", "off"], cases=2)
    proc = subprocess.run([batch_bin, manifest, "--maxfial", "3"], capture_output=True, text=True)
    assert proc.returncode == 2 and "--maxfial: did you mean '--maxfail'?" in proc.stderr
    proc = subprocess.run([batch_bin, manifest, "--filter", "off_001", *FAST], capture_output=True, text=True)
    assert proc.returncode == 2 and "--filter off_001: did you mean 'off_0001'?" in proc.stderr
    opverify = os.path.join(BUILD, "runner", "opverify")
    proc = subprocess.run([opverify, "verfy", "--op_name", "x"], capture_output=True, text=True)
    assert proc.returncode == 2 and "verfy: did you mean 'verify'?" in proc.stderr
    proc = subprocess.run([opverify, "verify", "--op_name", "x", "--cse", "3"], capture_output=True, text=True)
    assert proc.returncode == 2 and "--cse: did you mean '--case'?" in proc.stderr
    reduce = os.path.join(BUILD, "reduce", "opverify-reduce")
    proc = subprocess.run([reduce, str(tmp_path), "--histroy", "h.jsonl"], capture_output=True, text=True)
    assert proc.returncode == 2 and "--histroy: did you mean '--history'?" in proc.stderr
    # Nothing near: no guess.
    proc = subprocess.run([batch_bin, manifest, "--zzzzzzzz"], capture_output=True, text=True)
    assert proc.returncode == 2 and "did you mean" not in proc.stderr


def test_runs_latest_the_report_link_and_a_quiet_end_under_mpirun(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["ok", "raises", "off"], cases=2)
    env = dict(os.environ, **MPI_ENV)
    command = ["mpirun", "-q", "-np", "2", "--oversubscribe", batch_bin, manifest, *FAST]
    proc = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert proc.returncode == 1, proc.stderr[-3000:]
    latest = tmp_path / "runs" / "latest"
    assert latest.is_symlink() and not os.path.isabs(os.readlink(latest))
    first = latest.resolve()
    assert first.parent == tmp_path / "runs" and first.name.startswith("night-")
    # One summary, from the reducer rank; the report's link on the last line; no banner.
    totals = [line for line in proc.stdout.splitlines() if re.match(r"\d+ operators, \d+ cases:", line)]
    assert totals == [proc.stdout.splitlines()[-1]]
    assert totals[0].endswith(f" -> file://{first}/report.html"), totals
    assert proc.stdout.count("failing operators (") == 1
    assert ESCAPE not in proc.stdout  # Open MPI gives ranks a pseudo-terminal: no colour under it
    assert "mpirun" not in proc.stderr and "Primary job" not in proc.stderr and "-----" not in proc.stderr
    # --rerun-failed runs/latest: the failed cases of the newest run; runs/latest then names the rerun.
    rerun = subprocess.run(command + ["--rerun-failed", "runs/latest"], capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=600)
    assert rerun.returncode == 1, rerun.stderr[-3000:]
    second = latest.resolve()
    assert second != first and second.parent == first.parent
    summary = json.loads((second / "summary.json").read_text())
    assert summary["totals"]["cases"] == 4 and summary["totals"]["failed"] == 4
    # A run folder elsewhere leaves runs/latest alone.
    other = subprocess.run(command + ["--run-dir", str(tmp_path / "elsewhere")], capture_output=True, text=True,
                           cwd=tmp_path, env=env, timeout=600)
    assert other.returncode == 1 and latest.resolve() == second
    # --resume --run-dir runs/latest finishes the run it names, and runs/latest keeps naming it.
    resumed = subprocess.run([batch_bin, manifest, *FAST, "--resume", "--run-dir", "runs/latest"],
                             capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert resumed.returncode == 1, resumed.stderr[-3000:]
    assert resumed.stdout.splitlines()[-1].endswith(f" -> file://{second}/report.html"), resumed.stdout[-500:]
    assert os.readlink(latest) == second.name
