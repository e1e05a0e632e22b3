"""--version and --help of every program: the version and git commit fixed at
build time, the defaults and the exit codes (issue 15, item 4)."""
import os
import re
import subprocess

import pytest

from conftest import BUILD

SOURCE = os.path.join(os.path.dirname(__file__), "..", "..")
PROGRAMS = {
    "opverify": os.path.join(BUILD, "runner", "opverify"),
    "opverify-batch": os.path.join(BUILD, "runner", "opverify-batch"),
    "opverify-reduce": os.path.join(BUILD, "reduce", "opverify-reduce"),
    # The two programs opverify starts itself answer --version too.
    "opverify-executor": os.path.join(BUILD, "runner", "opverify-executor"),
    "opverify-sandbox": os.path.join(BUILD, "runner", "opverify-sandbox"),
}


def run(*args):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=60)


def project_version():
    with open(os.path.join(SOURCE, "CMakeLists.txt")) as f:
        return re.search(r"project\(opverify VERSION ([0-9.]+)", f.read()).group(1)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_version_prints_the_project_version_and_a_commit_of_this_repository(name):
    result = run(PROGRAMS[name], "--version")
    assert result.returncode == 0, result.stderr
    match = re.fullmatch(r"opverify (\S+) \((\S+)\)\n", result.stdout)
    assert match, result.stdout
    assert match.group(1) == project_version()
    commit = match.group(2)
    in_git = run("git", "-C", SOURCE, "rev-parse", "--git-dir").returncode == 0
    if not in_git:
        assert commit == "unknown"
        return
    assert re.fullmatch(r"[0-9a-f]{7,}(-dirty)?", commit), commit
    # The commit the binary was built from is one of this repository's.
    found = run("git", "-C", SOURCE, "cat-file", "-e", commit.removesuffix("-dirty") + "^{commit}")
    assert found.returncode == 0, f"{commit} is not a commit of {SOURCE}"


def test_every_program_prints_the_same_version_line():
    lines = {run(path, "--version").stdout for path in PROGRAMS.values()}
    assert len(lines) == 1, lines


@pytest.mark.parametrize("args, codes, default", [
    (["opverify-batch"], ["0", "1", "2", "3", "4"], "=failures"),  # --store
    (["opverify-reduce"], ["0", "1", "2", "3"], "=5"),               # --perf-threshold
    (["opverify", "compare"], ["0", "1", "2"], "=eco"),               # --standard
    (["opverify", "verify"], ["0", "1", "2"], "=900"),                # --timeout
    (["opverify", "bench"], ["0", "1", "2"], "=50"),                  # --repeats
    (["opverify", "lint"], ["0", "1", "2"], None),
])
def test_help_lists_the_exit_codes_and_the_defaults(args, codes, default):
    program, *sub = args
    result = run(PROGRAMS[program], *sub, "--help")
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "Exit codes:" in text, text
    footer = text[text.index("Exit codes:"):]
    for code in codes:
        assert re.search(rf"^\s+{code}\s+\S", footer, re.MULTILINE), f"exit code {code} missing:\n{footer}"
    if default:
        assert default in text, text
    assert "--version" in run(PROGRAMS[program], "--help").stdout


def test_version_is_not_a_usage_error_where_a_subcommand_is_required():
    # `opverify` needs a subcommand; --version alone still succeeds.
    assert run(PROGRAMS["opverify"], "--version").returncode == 0
    assert run(PROGRAMS["opverify"]).returncode == 2


def test_every_file_a_run_writes_names_the_build(tmp_path):
    """summary.json, verify_result.json, perf_result.json, report.md, report.html
    and junit.xml all say which opverify ran the run (issue 15, item 4)."""
    import json

    version = run(PROGRAMS["opverify"], "--version").stdout.strip()  # "opverify X (C)"
    _, number, commit = version.split(" ")
    commit = commit.strip("()")
    run_dir = tmp_path / "run"
    env = dict(os.environ, OPVERIFY_BACKEND="cpu")
    result = subprocess.run([PROGRAMS["opverify-batch"], os.path.join(SOURCE, "jobs", "cpu_smoke.json"),
                             "--run-dir", str(run_dir), "--backend", "cpu"],
                            capture_output=True, text=True, timeout=600, env=env)
    assert result.returncode in (0, 1), result.stderr
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["opverify"] == {"version": number, "commit": commit}
    ops = sorted((run_dir / "ops").iterdir())
    assert ops
    for op in ops:
        verify = json.loads((op / "verify_result.json").read_text())
        assert (verify["opverify"]["version"], verify["opverify"]["commit"]) == (number, commit)
        if (op / "perf_result.json").exists():
            perf = json.loads((op / "perf_result.json").read_text())
            assert (perf["opverify"]["version"], perf["opverify"]["commit"]) == (number, commit)
    assert version in (run_dir / "report.md").read_text()
    assert version in (run_dir / "report.html").read_text()
    assert f'name="opverify" value="{version}"' in (run_dir / "junit.xml").read_text()
