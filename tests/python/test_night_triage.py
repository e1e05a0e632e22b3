"""The morning after a night, for real (mpirun -np 2 on the cpu backend):
--maxfail/-x stop a run of failing operators cleanly (the coordinator counts
the failures of every rank), the reports cover what ran and list the rest as
not run; the A/B of accuracy failures is bounded: one re-run per operator
and kind by default, the rest inheriting its class, and --max-ab for the
whole run. Operators are generated into a temporary folder
(perf/night_ab.py's make_night)."""
import json
import os
import re
import subprocess

import pytest

from test_batch import MPI_ENV, batch_bin, run_batch  # noqa: F401

from night_ab import make_night  # perf/night_ab.py (conftest puts perf/ on the path)

FAST = ["--no-ab", "--no-bench"]


ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def summary_of(run_dir):
    """summary.json, checked against its schema where jsonschema is installed."""
    summary = json.loads((run_dir / "summary.json").read_text())
    try:
        import jsonschema
    except ImportError:
        return summary
    with open(os.path.join(ROOT, "schemas", "summary.schema.json")) as f:
        jsonschema.validate(summary, json.load(f))
    return summary


@pytest.mark.parametrize("ranks", [None, 2])
def test_exitfirst_stops_after_the_first_failed_case(batch_bin, tmp_path, ranks):
    manifest, names = make_night(tmp_path, ["raises"] * 6)
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "-x", *FAST, ranks=ranks)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = summary_of(run_dir)
    assert summary["stopped_by_maxfail"] == {"max_failures": 1}
    failed = summary["totals"]["failed"]
    # One rank: exactly the first failure; two: the other rank's case in hand may finish too.
    assert failed == 1 if ranks is None else 1 <= failed <= 2
    # Every case of the manifest is either stored or listed as not run, none twice.
    not_run = [entry["case_id"] for entry in summary["not_run"]]
    stored = [f["case_id"] for f in summary["failures"]]
    assert len(set(not_run) | set(stored)) == len(not_run) + len(stored) == 6 * 5
    assert all("--maxfail 1" in entry["reason"] for entry in summary["not_run"])
    # The console: the FAILED lines, a NOT RUN line per case not run (capped), the reason on the last line.
    out_lines = proc.stdout.splitlines()
    assert sum(line.startswith("FAILED ") for line in out_lines) == failed
    assert sum(line.startswith("NOT RUN ") for line in out_lines) == len(not_run)
    assert "stopped after --maxfail 1" in out_lines[-1] and "--resume" in out_lines[-1]
    assert summary["unassigned_items"] >= 6 - (ranks or 1)
    report = (run_dir / "report.md").read_text()
    assert "## Stopped early" in report and "--maxfail 1" in report
    import xml.etree.ElementTree as ET
    junit = ET.parse(run_dir / "junit.xml").getroot()
    assert junit.get("skipped") == str(len(not_run))


def test_maxfail_counts_failures_across_ranks_and_resume_finishes(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["ok", "raises", "off", "raises", "ok", "off", "raises", "ok"])
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "--maxfail", "7", *FAST, ranks=2)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = summary_of(run_dir)
    failed = summary["totals"]["failed"]
    assert 7 <= failed <= 8, summary["totals"]  # 7, and perhaps the other rank's case in hand
    assert summary["stopped_by_maxfail"] == {"max_failures": 7}
    assert summary["totals"]["cases"] + len(summary["not_run"]) == 8 * 5
    assert "stopped after --maxfail 7" in proc.stdout.splitlines()[-1]
    # --resume runs what was not run, with no limit: every failing case fails, no case twice.
    resumed = run_batch(batch_bin, manifest, run_dir, "--resume", *FAST, ranks=2)
    assert resumed.returncode == 1, resumed.stderr[-3000:]
    summary = summary_of(run_dir)
    assert summary["totals"]["cases"] == 40 and summary["totals"]["failed"] == 25
    assert summary["not_run"] == [] and "stopped_by_maxfail" not in summary


def test_maxfail_never_reached_runs_everything_and_usage_errors(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["ok", "raises"], cases=2)
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "--maxfail", "3", *FAST)
    assert proc.returncode == 1
    summary = summary_of(run_dir)
    assert summary["totals"]["cases"] == 4 and "stopped_by_maxfail" not in summary
    assert summary["not_run"] == [] and "NOT RUN" not in proc.stdout
    for flags in (["--maxfail", "0"], ["-x", "--maxfail", "2"]):
        bad = run_batch(batch_bin, manifest, tmp_path / "bad", *flags)
        assert bad.returncode == 2, flags
        assert not (tmp_path / "bad").exists()


def ab_rows(summary):
    """op -> [(case_id, ab class, inherited from)] of its failures, in case order."""
    rows = {}
    for f in summary["failures"]:
        rows.setdefault(f["op"], []).append((f["case_id"], f.get("ab"), f.get("ab_inherited_from")))
    return {op: sorted(cases) for op, cases in rows.items()}


def test_ab_runs_once_per_operator_and_kind_the_rest_inherit(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["off"] * 3 + ["ok"], cases=3, dtypes=["float32", "float64"])
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "--no-bench", ranks=2)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = summary_of(run_dir)
    rows = ab_rows(summary)
    assert sorted(rows) == names[:3]
    for op, cases in rows.items():
        assert len(cases) == 6 and all(ab == "real_defect" for _, ab, _ in cases), cases
        own = [case for case, _, source in cases if source is None]
        assert len(own) == 2, cases  # one per dtype: float32, float64
        for case, _, source in cases:
            assert source is None or source in own and source != case
    assert summary["ab"] == {"real_defect": 18}
    # The A/B's time is in the run's timing and the reports' time split.
    assert summary["timing"]["ab_s"] > 0 and summary["time_split"]["ab_s"] > 0
    report = (run_dir / "report.md").read_text()
    assert "real_defect (inherited from " in report
    assert "real_defect (inherited from " in (run_dir / "report.html").read_text()


def test_a_chunked_operators_ab_runs_once_over_its_chunks(batch_bin, tmp_path):
    """An operator cut into chunks on both ranks (--max-cases-per-item 2: 6 cases in 3 chunks)
    re-runs each kind of failure once over all its chunks, not once a chunk: a later chunk's
    case inherits the class of the case that ran it, whichever rank that was."""
    manifest, names = make_night(tmp_path, ["off"], cases=3, dtypes=["float32", "float64"])
    run_dir = tmp_path / "run"
    stream = tmp_path / "cases.jsonl"
    proc = run_batch(batch_bin, manifest, run_dir, "--no-bench", "--schedule", "cost",
                     "--max-cases-per-item", "2", "--progress", f"jsonl={stream}", ranks=2)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = summary_of(run_dir)
    # The case stream gives an inheriting case its class as soon as the case it inherits from
    # was heard; before that it names that case, whose own line comes later.
    lines = [json.loads(line) for line in stream.read_text().splitlines()]
    order = {line["case_id"]: n for n, line in enumerate(lines)}
    for n, line in enumerate(lines):
        if line["ab"] is None:
            assert order[line["ab_inherited_from"]] > n, lines
        else:
            assert line["ab"] == "real_defect", lines
    cases = ab_rows(summary)[names[0]]
    assert len(cases) == 6 and all(ab == "real_defect" for _, ab, _ in cases), cases
    own = [case for case, _, source in cases if source is None]
    assert len(own) == 2, cases  # one per dtype over the three chunks, not one per chunk and dtype
    assert all(source is None or source in own for _, _, source in cases), cases
    assert summary["ab"] == {"real_defect": 6}
    chunks = [item for item in summary["timeline"]["items"] if item["op"] == names[0]]
    assert len(chunks) >= 2 and {item["rank"] for item in chunks} == {0, 1}, chunks


def test_ab_every_case_reruns_each_failure(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["off"], cases=3)
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "--no-bench", "--ab-every-case")
    assert proc.returncode == 1, proc.stderr[-3000:]
    cases = ab_rows(summary_of(run_dir))[names[0]]
    assert [(ab, source) for _, ab, source in cases] == [("real_defect", None)] * 3


def test_max_ab_is_a_budget_for_the_whole_run(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["off"] * 5, cases=2)
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "--no-bench", "--max-ab", "2", ranks=2)
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = summary_of(run_dir)
    classes = [(ab, source is not None) for cases in ab_rows(summary).values() for _, ab, source in cases]
    assert classes.count(("real_defect", False)) == 2  # the budget, over both ranks
    assert classes.count(("real_defect", True)) == 2   # each A/B'd operator's second case
    assert classes.count(("skipped (budget)", False)) == 6
    assert summary["ab"] == {"real_defect": 4, "skipped (budget)": 6}
    assert "skipped (budget)" in (run_dir / "report.md").read_text()


OWN_CASES_TASK = """import torch


class Model(torch.nn.Module):
    def forward(self, x):
        return x * 2


def get_init_inputs():
    return []


def get_inputs(n=8):
    return [torch.linspace(1, 2, n)]


def get_input_groups():
    return [get_inputs(n) for n in (8, 9, 10)]
"""
# Right on the first case (8 elements), 1% off on the others.
OFF_AFTER_FIRST = ("import torch\n\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                   "        return x * (2 if x.numel() == 8 else 2.02)\n")
TRIAGE_LINE = r"^  (\S+)  (\d+)/(\d+)  (\S+)( \((\S+)\))?  first: (.*)$"


def test_triage_by_operator_on_the_console_and_first_in_the_reports(batch_bin, tmp_path):
    manifest, names = make_night(tmp_path, ["off", "raises", "ok"], cases=3)
    ops = tmp_path / "ops"
    (ops / "own_cases_torch.py").write_text(OWN_CASES_TASK)
    (ops / "own_cases_cpu_impl.py").write_text(OFF_AFTER_FIRST)
    job = json.loads(open(manifest).read())
    job["operators"].append({"name": "own_cases", "dir": str(ops)})
    open(manifest, "w").write(json.dumps(job))
    run_dir = tmp_path / "run"
    proc = run_batch(batch_bin, manifest, run_dir, "--no-bench", ranks=2)
    assert proc.returncode == 1, proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    start = lines.index("failing operators (3):")
    triage = {m.group(1): m for m in (re.match(TRIAGE_LINE, line) for line in lines[start + 1:start + 4])}
    assert sorted(triage) == sorted([names[0], names[1], "own_cases"]), lines[start:]
    assert triage[names[0]].group(2, 3, 4, 6) == ("3", "3", "AccuracyError", "real_defect")
    assert triage["own_cases"].group(2, 3, 4, 6) == ("2", "3", "AccuracyError", "real_defect")
    assert triage[names[1]].group(2, 3) == ("3", "3") and triage[names[1]].group(6) is None
    assert "no kernel for n=8" in triage[names[1]].group(7)
    assert lines[-1].startswith("4 operators, 12 cases")
    # report.md: the failing operators first, before the failures and the big table.
    report = (run_dir / "report.md").read_text()
    assert report.index("## Failing operators") < report.index("## Operators") < report.index("## Failures")
    # report.html: the same rows, each linked to its operator in the grid.
    html = (run_dir / "report.html").read_text()
    table = html[html.index('id="failing-operators"'):]
    table = table[:table.index("</table>")]
    assert table.count('<a href="#') == 3 and "own_cases" in table
    # The own-cases operator's repro runs its first failing case alone, into a folder of its own.
    row = next(line for line in report.splitlines() if line.startswith("| own_cases |"))
    repro = row.rsplit("`", 2)[-2] if row.count("`") >= 2 else ""
    assert repro.startswith("opverify verify ") and " --case 2 --output " in repro, row
    before = sorted(os.listdir(ops))
    out = tmp_path / "repro"
    command = repro.replace("opverify verify", os.path.join(os.path.dirname(batch_bin), "opverify") + " verify", 1)
    command = re.sub(r"--output \S+", f"--output {out}/", command)
    again = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=300)
    assert again.returncode == 1, again.stderr[-2000:]
    result = json.loads((out / "verify_result.json").read_text())
    assert [c["case_idx"] for c in result["opverify"]["cases"]] == [2]
    assert sorted(os.listdir(ops)) == before  # nothing written beside the sources
