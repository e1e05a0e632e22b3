"""The cost-aware plan for real (opverify-batch --schedule cost, the
default): under mpirun -np 2 an operator over a rank's fair share is split
into case chunks on both ranks (and one over --max-cases-per-item into
chunks of at most that many), and their verdicts, A/B classes and
benchmarks are those of the same operators run whole (--schedule fifo);
summary.json holds the per-rank timeline, report.html draws it, and a later
night's --previous reads it back."""
import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from test_batch import MPI_ENV, batch_bin, run_batch, verdicts  # noqa: F401 (a fixture)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CPU_OPS = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")
# "wide": 24 cases, two failing, over half the predicted work: cut into 3
# chunks by its cost (8 cases each); "wide_ok": 14 passing cases, cut in 2
# by --max-cases-per-item 12 alone (under the fair share).
SIZES = {"wide": [8 * (k + 1) for k in range(24)], "wide_ok": [8 * (k + 1) for k in range(14)]}
FAILING_SIZES = (24, 168)  # cases 2 and 20: in the first and the last chunk
IMPL = """import torch


class ModelNew(torch.nn.Module):
    def forward(self, x, y):
        out = torch.add(x, y)
        return out * 1.5 if x.numel() in {failing} else out
"""


@pytest.fixture(scope="module")
def two_plans(batch_bin, tmp_path_factory):  # noqa: F811 (the fixture)
    base = tmp_path_factory.mktemp("schedule")
    ops = base / "ops"
    ops.mkdir()
    for name, failing in (("wide", FAILING_SIZES), ("wide_ok", ())):
        shutil.copy(os.path.join(CPU_OPS, "add_sweep_torch.py"), ops / f"{name}_torch.py")
        (ops / f"{name}_cpu_impl.py").write_text(IMPL.format(failing=set(failing) or "()"))
    manifest = base / "jobs.json"
    manifest.write_text(json.dumps({"name": "schedule", "defaults": {
        "impl_name": "cpu_impl", "lint": False, "bench": {"warmup": 1, "repeats": 3}},
        "operators": [{"name": name, "dir": str(ops), "sweep": {"n": sizes, "dtype": ["float32"]}}
                      for name, sizes in SIZES.items()]}))
    runs = {}
    for schedule, flags in (("cost", ["--max-cases-per-item", "12"]), ("fifo", [])):
        runs[schedule] = base / schedule
        proc = run_batch(batch_bin, manifest, runs[schedule], "--schedule", schedule, *flags, ranks=2)
        assert proc.returncode == 1, proc.stderr[-3000:]  # the two failing cases
    return {"manifest": manifest, **runs}


def summary(run_dir):
    return json.loads((run_dir / "summary.json").read_text())


def timeline_seconds(run_dir):
    """{operator: its items' time} in the run's timeline: what the next night's plan expects."""
    spent = {}
    for item in summary(run_dir)["timeline"]["items"]:
        spent[item["op"]] = spent.get(item["op"], 0) + item["end_s"] - item["start_s"]
    return spent


def planned_seconds(stdout):
    """{operator: expected seconds} of a --dry-run's items."""
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"item \d+: (\w+) .*expected ([\d.]+) s", stdout)}


def test_an_operator_over_its_share_is_split_over_both_ranks(two_plans):
    items = summary(two_plans["cost"])["timeline"]["items"]
    for op, count in (("wide", 3), ("wide_ok", 2)):
        chunks = [item for item in items if item["op"] == op]
        assert len(chunks) == count and {item["chunks"] for item in chunks} == {count}, chunks
        assert sorted(item["chunk"] for item in chunks) == list(range(count))
        assert sum(item["cases"] for item in chunks) == len(SIZES[op])
    assert items[0]["op"] == "wide"  # the longest predicted first
    assert {item["rank"] for item in items} == {0, 1}
    whole = summary(two_plans["fifo"])["timeline"]["items"]
    assert sorted(item["op"] for item in whole) == ["wide", "wide_ok"]
    assert all(item["chunks"] == 1 for item in whole)


def test_split_verdicts_ab_and_benchmark_equal_the_unsplit_run(two_plans):
    split, whole = two_plans["cost"], two_plans["fifo"]
    assert verdicts(split) == verdicts(whole)
    assert len(verdicts(split)) == len(SIZES["wide"]) + len(SIZES["wide_ok"])
    failed = {case for case, (passed, _) in verdicts(split).items() if not passed}
    assert len(failed) == len(FAILING_SIZES) and all(case.startswith("wide/") for case in failed)
    # The A/B class of each failure (a chunk re-runs its own first failure of a kind; the
    # unsplit operator's second failure inherits the first's class: the same class).
    classes = [{f["case_id"]: f.get("ab") for f in summary(run)["failures"]} for run in (split, whole)]
    assert classes[0] == classes[1] and all(c == "real_defect" for c in classes[0].values()), classes
    for run in (split, whole):
        operators = {op["name"]: op for op in summary(run)["operators"]}
        assert operators["wide"]["failed"] == 2 and operators["wide_ok"]["passed"] == len(SIZES["wide_ok"])
    # The passing operator is benchmarked in both, every shape once.
    shapes = [json.loads((run / "ops" / "wide_ok" / "perf_result.json").read_text()) for run in (split, whole)]
    for perf in shapes:
        assert sorted(s["case_idx"] for s in perf["per_shape_results"]) == list(range(1, len(SIZES["wide_ok"]) + 1))
    assert not (split / "ops" / "wide" / "perf_result.json").exists()


def test_the_timeline_is_in_summary_json_and_report_html(two_plans):
    run = two_plans["cost"]
    timeline = summary(run)["timeline"]
    assert timeline["ranks"] == 2 and timeline["wall_s"] > 0
    for item in timeline["items"]:
        assert 0 <= item["start_s"] < item["end_s"] <= timeline["wall_s"] + 1e-6
        assert item["startup_s"] > 0 and item["cases_s"] > 0
        assert item["cases_s"] + item["startup_s"] <= item["end_s"] - item["start_s"] + 0.5
    # A rank's items do not overlap.
    for rank in (0, 1):
        spans = sorted((i["start_s"], i["end_s"]) for i in timeline["items"] if i["rank"] == rank)
        assert all(a[1] <= b[0] + 1e-6 for a, b in zip(spans, spans[1:])), spans
    assert any(i["bench_s"] > 0 for i in timeline["items"] if i["op"] == "wide_ok")
    html = (run / "report.html").read_text()
    section = html[html.index('<section id="timeline">'):]
    section = section[:section.index("</section>")]
    assert section.count("<g><title>") == len(timeline["items"])
    assert "rank 0" in section and "rank 1" in section and "wide (chunk 3 of 3) on rank" in section
    assert re.search(r'class="tl-startup" x=', section) and re.search(r'class="tl-bench" x=', section)


def test_the_next_night_plans_from_the_timeline(batch_bin, two_plans):  # noqa: F811
    # --dry-run --previous: each operator's expected seconds are its items' time in the timeline.
    previous = two_plans["cost"]
    spent = timeline_seconds(previous)
    proc = run_batch(batch_bin, two_plans["manifest"], previous.parent / "dry", "--dry-run", "--previous", previous,
                     "--schedule", "fifo")
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = planned_seconds(proc.stdout)
    assert set(expected) == {"wide", "wide_ok"}, proc.stdout
    for op, seconds in expected.items():
        assert abs(seconds - spent[op]) < 0.1, (op, seconds, spent[op])


def test_a_hostile_timeline_is_passed_over(batch_bin, two_plans):  # noqa: F811
    # summary.json is data: a timeline of the wrong shapes neither stops the next night's
    # --previous nor opverify-reduce's report.html.
    run = two_plans["cost"].parent / "hostile"
    shutil.copytree(two_plans["cost"], run)
    (run / "run.lock").unlink(missing_ok=True)
    data = summary(run)
    data["timeline"] = {"ranks": "two", "wall_s": 5, "items": [
        {"op": 7, "start_s": "x"}, {"op": "wide", "start_s": 0, "end_s": [1]}, [], None,
        {"op": "<script>wide</script>", "rank": 0, "start_s": 1, "end_s": 2, "chunks": "many", "cases_s": {}}]}
    (run / "summary.json").write_text(json.dumps(data))
    proc = run_batch(batch_bin, two_plans["manifest"], run.parent / "dry2", "--dry-run", "--previous", run)
    assert proc.returncode == 0 and "item 0: wide" in proc.stdout, proc.stderr[-3000:]
    reduce = os.path.join(os.path.dirname(os.path.dirname(batch_bin)), "reduce", "opverify-reduce")
    proc = subprocess.run([reduce, str(run)], capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    html = (run / "report.html").read_text()
    assert "<script>wide" not in html and "&lt;script&gt;wide&lt;/script&gt; on rank 0" in html


def test_a_nightly_history_predicts_the_next_nights_plan(batch_bin, two_plans, tmp_path):  # noqa: F811
    # A nightly sweep names --history, not last night's folder: each operator's line carries
    # its seconds (its items' time in the timeline), and the next night's plan reads the latest
    # of them. A line without seconds (an incomplete night) or with no number there is passed
    # over, a damaged line warned about; --previous, when named, is what the plan reads.
    run = tmp_path / "night"
    shutil.copytree(two_plans["cost"], run)
    (run / "run.lock").unlink(missing_ok=True)
    history = tmp_path / "history.jsonl"
    history.write_text(json.dumps({"op": "wide", "verdict": "passed", "seconds": 999.0, "run": "/old"}) + "\n")
    reduce = os.path.join(os.path.dirname(os.path.dirname(batch_bin)), "reduce", "opverify-reduce")
    proc = subprocess.run([reduce, str(run), "--history", str(history)], capture_output=True, text=True, timeout=300)
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    spent = timeline_seconds(run)
    lines = [json.loads(line) for line in history.read_text().splitlines()]
    tonight = {line["op"]: line for line in lines if line["run"] == str(run)}
    assert set(tonight) == {"wide", "wide_ok"}, lines
    for op, seconds in spent.items():
        assert abs(tonight[op]["seconds"] - seconds) < 1e-6, (op, tonight[op], seconds)
    with history.open("a") as f:
        f.write('{"op": "wide", "seconds": "NaN"}\n{"op": "wide", "seconds": -5}\nnot json\n'
                '{"op": "wide_ok", "verdict": "incomplete"}\n')

    def planned(*flags):
        proc = run_batch(batch_bin, two_plans["manifest"], tmp_path / f"dry{len(list(tmp_path.glob('dry*')))}",
                         "--dry-run", "--schedule", "fifo", *flags)
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc, planned_seconds(proc.stdout)

    proc, expected = planned("--history", history)
    assert set(expected) == {"wide", "wide_ok"}, proc.stdout
    for op, seconds in expected.items():
        assert abs(seconds - spent[op]) < 0.1, (op, seconds, spent[op])
    said = proc.stdout + proc.stderr
    assert "history.jsonl:6: skipped: not a JSON line" in said and "last timed night" in said, said[-3000:]
    fifo = timeline_seconds(two_plans["fifo"])
    _, expected = planned("--history", history, "--previous", two_plans["fifo"])
    for op, seconds in expected.items():
        assert abs(seconds - fifo[op]) < 0.1, (op, seconds, fifo[op])
    proc, expected = planned("--history", tmp_path / "no-such-history.jsonl")  # the first night
    assert expected == {} and "item 0: wide (24 sweep cases)" in proc.stdout, proc.stdout


def test_a_dry_run_plans_for_the_ranks_it_is_told(batch_bin, two_plans, tmp_path):  # noqa: F811
    # --plan-ranks N: the plan a launch of N ranks would make (a node's, from one process), with
    # each chunk named; refused without --dry-run.
    def chunks(ranks):
        proc = run_batch(batch_bin, two_plans["manifest"], tmp_path / f"dry{ranks}", "--dry-run",
                         "--previous", two_plans["fifo"], "--plan-ranks", str(ranks))
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert f"work items for {ranks} ranks" in proc.stdout, proc.stdout
        found = re.findall(r"item \d+: wide chunk (\d+) of (\d+) \((\d+) sweep cases\)", proc.stdout)
        return found, proc.stdout

    few, _ = chunks(2)
    many, shown = chunks(16)
    assert len(many) > max(len(few), 1), shown
    assert sum(int(cases) for _, _, cases in many) == 24 and {int(n) for _, n, _ in many} == {len(many)}, shown
    proc = run_batch(batch_bin, two_plans["manifest"], tmp_path / "run", "--plan-ranks", "4")
    assert proc.returncode == 2 and "--dry-run" in proc.stderr, proc.stderr[-2000:]


def test_the_node_simulation_replays_a_measured_night_and_asks_the_product_for_its_plans(batch_bin, two_plans,  # noqa: F811
                                                                                         tmp_path):
    # perf/node_simulation.py: the measured items replayed in their order over the measured
    # ranks give the measured wall back (the coordinator's hand-out), and each simulated night
    # is planned by opverify-batch --dry-run --plan-ranks itself.
    out = tmp_path / "sim.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "perf", "node_simulation.py"), str(two_plans["cost"]),
                           "--cases", "100", "--gpus", "3", "--json", str(out)],
                          capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, OPVERIFY_BUILD_DIR=os.path.dirname(os.path.dirname(batch_bin))))
    assert proc.returncode == 0, proc.stdout + proc.stderr[-3000:]
    result = json.loads(out.read_text())
    night = result["measured"]
    assert night["cases"] == 38 and night["ranks"] == 2 and night["operators"] == 2, night
    assert abs(night["replayed_wall_s"] - night["wall_s"]) <= 0.05 * night["wall_s"], night
    rows = {(row["gpus"], row["schedule"]): row for row in result["simulated"]}
    assert set(rows) == {(1, "fifo"), (1, "cost"), (3, "fifo"), (3, "cost")}, rows
    for row in rows.values():
        assert row["cases"] == 114 and row["items"] >= 6 and row["ranks"] == 2 * row["gpus"], row
        assert 0 <= row["idle_fraction"] < 1 and row["wall_s"] > 0, row
    assert rows[(3, "fifo")]["wall_s"] < rows[(1, "fifo")]["wall_s"], rows


def test_a_resumed_run_plans_from_its_own_times(batch_bin, two_plans, tmp_path):  # noqa: F811
    # --resume without --previous or a timed --history: the run folder's own timeline predicts
    # the costs (an operator cut short by the stop has its time so far, a lower bound).
    run = tmp_path / "stopped"
    shutil.copytree(two_plans["cost"], run)
    (run / "run.lock").unlink(missing_ok=True)
    spent = timeline_seconds(run)
    proc = run_batch(batch_bin, two_plans["manifest"], run, "--resume", "--dry-run", "--schedule", "fifo",
                     "--history", tmp_path / "empty-history.jsonl")
    assert proc.returncode == 0, proc.stderr[-3000:]
    expected = planned_seconds(proc.stdout)
    assert set(expected) == {"wide", "wide_ok"}, proc.stdout
    for op, seconds in expected.items():
        assert abs(seconds - spent[op]) < 0.1, (op, seconds, spent[op])
