"""opverify-reduce and the reports every run writes: reports rebuilt from
the HDF5 shards alone, junit.xml checked with xmllint against
schemas/junit.xsd, report.md, and the baseline diff on two real runs with a
planted regression (an operator that newly fails, one that got slower), and
the --part parts of a manifest merged back into the whole run (--merge)."""
import json
import os
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from test_batch import verdicts

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
CPU_OPS = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")
IMPL = """import time
import torch


class ModelNew(torch.nn.Module):
    def forward(self, x):
{body}
"""
RIGHT = "        return x.clamp(min=0)"
SLOW = "        time.sleep(0.003)\n        return x.clamp(min=0)"
WRONG = "        return x.clamp(min=0) * 1.5"
LOUD = "        raise ValueError(\"<script>alert(1)</script> & 'quoted' \\x01 text\")"


def program(name):
    path = os.path.join(BUILD, "reduce" if name == "opverify-reduce" else "runner", name)
    assert os.access(path, os.X_OK), path
    return path


def make_ops(folder, bodies):
    folder.mkdir(parents=True, exist_ok=True)
    for op, body in bodies.items():
        shutil.copy(os.path.join(CPU_OPS, "relu_ok_torch.py"), folder / f"{op}_torch.py")
        (folder / f"{op}_cpu_impl.py").write_text(IMPL.format(body=body))
    manifest = folder / "jobs.json"
    manifest.write_text(json.dumps({"name": "reduce_test", "defaults": {
        "impl_name": "cpu_impl", "lint": False, "bench": {"warmup": 2, "repeats": 20}},
        "operators": [{"name": op, "dir": str(folder)} for op in bodies]}))
    return manifest


def batch(manifest, run_dir, *flags):
    return subprocess.run([program("opverify-batch"), str(manifest), "--backend", "cpu", "--run-dir", str(run_dir),
                           "--no-ab", *flags], capture_output=True, text=True, timeout=600)


def reduce(*args):
    return subprocess.run([program("opverify-reduce"), *map(str, args)], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("reduce")
    before = make_ops(base / "before", {"steady": RIGHT, "flip": RIGHT, "loud": LOUD})
    after = make_ops(base / "after", {"steady": SLOW, "flip": WRONG, "loud": LOUD})
    runs = []
    for manifest, name in ((before, "run_before"), (after, "run_after")):
        proc = batch(manifest, base / name)
        assert proc.returncode == 1, proc.stderr[-3000:]  # "loud" fails in both
        runs.append(base / name)
    return runs


def test_junit_validates_and_escapes(two_runs):
    junit = two_runs[1] / "junit.xml"
    check = subprocess.run(["xmllint", "--noout", "--schema", os.path.join(ROOT, "schemas", "junit.xsd"), str(junit)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    root = ET.parse(junit).getroot()
    assert root.tag == "testsuites" and root.get("name") == "reduce_test"
    assert int(root.get("tests")) == 12 and int(root.get("failures")) == 8  # flip's 4, loud's 4
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert set(suites) == {"steady", "flip", "loud"}
    assert [c.get("name") for c in suites["steady"].findall("testcase")] == [f"steady/#{i}" for i in range(1, 5)]
    failure = suites["loud"].find("testcase").find("failure")
    assert failure.get("type") == "RuntimeError"
    # The operator's text arrives as text: parsed back, it is what was raised (the control character replaced).
    assert "<script>alert(1)</script> & 'quoted' \ufffd text" in failure.text
    flip = suites["flip"].find("testcase")
    assert flip.find("failure").get("type") == "AccuracyError"
    assert "A/B" not in flip.find("failure").get("message")  # --no-ab: no attempts to show
    repro = suites["flip"].find("properties").find("property")
    assert repro.get("name") == "repro" and "opverify verify --op_name flip " in repro.get("value")


def test_summary_follows_its_schema(two_runs):
    jsonschema = pytest.importorskip("jsonschema")
    with open(os.path.join(ROOT, "schemas", "summary.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft7Validator.check_schema(schema)
    for run in two_runs:
        summary = json.loads((run / "summary.json").read_text())
        jsonschema.validate(summary, schema)
        grid = {o["name"]: o["dtypes"] for o in summary["operators"]}
        assert grid["flip"] == {"bfloat16": {"cases": 1, "failed": int(run.name == "run_after")},
                                "float32": {"cases": 3, "failed": 3 * int(run.name == "run_after")}}


def test_precision_report_has_seed_003s_sections(two_runs):
    report = (two_runs[1] / "ops" / "flip" / "precision_report.md").read_text()
    for section in ("## Verification configuration", "## Precision standards", "## Verification results",
                    "## Error metrics", "## Criteria"):
        assert section in report
    assert "- passed: 0\n- failed: 4\n- total: 4" in report
    assert "| float32 | 2^-13 = 1.22e-4 | 1.22e-4 | 1.22e-3 |" in report
    assert "CPU cores" in report  # the device's number of compute units
    # flip multiplies by 1.5: every element is 50% off (relu's zeros aside).
    row = [line for line in report.splitlines() if line.startswith("| 1 | 0 | float32 | [4, 1000] | eco | eco |")][0]
    assert "| not met | AccuracyError |" in row
    mere = float(row.split("|")[7])
    assert 0.2 < mere <= 0.5
    steady = (two_runs[1] / "ops" / "steady" / "precision_report.md").read_text()
    assert "| met | pass |" in steady and "(4 of 4: PASS)" in steady


def test_report_md_lists_failures_with_repro_commands(two_runs):
    report = (two_runs[1] / "report.md").read_text()
    assert "| flip | 4 | 0 | 4 | AccuracyError 4" in report
    assert "opverify verify --op_name loud " in report
    assert "geometric mean speedup" in report  # steady was benchmarked


def test_reports_are_rebuilt_from_the_shards_alone(two_runs, tmp_path):
    run = tmp_path / "copy"
    shutil.copytree(two_runs[1], run)
    before = {name: json.loads((run / "ops" / "flip" / name).read_text()) for name in ["verify_result.json"]}
    summary = json.loads((run / "summary.json").read_text())
    perf = json.loads((run / "ops" / "steady" / "perf_result.json").read_text())
    for name in ("summary.json", "junit.xml", "report.md", "results.h5"):
        (run / name).unlink()
    shutil.rmtree(run / "ops")
    proc = reduce(run)
    assert proc.returncode == 0, proc.stderr
    rebuilt = json.loads((run / "summary.json").read_text())
    assert rebuilt["totals"] == summary["totals"]
    assert rebuilt["operators"] == summary["operators"]
    again = json.loads((run / "ops" / "flip" / "verify_result.json").read_text())
    assert again["failures"] == before["verify_result.json"]["failures"]
    assert json.loads((run / "ops" / "steady" / "perf_result.json").read_text())["per_shape_results"] == \
        perf["per_shape_results"]
    assert (run / "junit.xml").exists() and (run / "report.md").exists()


def test_baseline_diff_finds_the_planted_regressions(two_runs):
    before, after = two_runs
    proc = reduce(after, "--baseline", before, "--perf-threshold", "10")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    diff = json.loads((after / "baseline_diff.json").read_text())
    assert diff["regressed"] is True
    assert diff["newly_failing"] == ["flip"] and diff["fixed"] == []
    assert [c["op"] for c in diff["slower"]] == ["steady"]
    assert diff["slower"][0]["latency_ratio"] > 10  # 3 ms of sleep on a microsecond forward
    assert "REGRESSED" in proc.stdout and "newly failing: flip" in proc.stdout
    # The same in report.md and on report.html's first screen, each name linked to its row.
    md = (after / "report.md").read_text()
    assert f"## Against the baseline\n\n`{before}`: **REGRESSED**\n\n- newly failing (1): `flip`\n- slower (1): `steady` +" in md
    html = (after / "report.html").read_text()
    assert 'id="regressed">REGRESSED</span>' in html and 'newly failing (1): <a href="#op-flip">flip</a>' in html
    assert 'slower (1): <a href="#op-steady">steady</a> +' in html and '<tbody id="op-steady"' in html


def test_the_other_way_round_is_fixed_and_faster(two_runs):
    before, after = two_runs
    proc = reduce(before, "--baseline", after)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    diff = json.loads((before / "baseline_diff.json").read_text())
    assert diff["fixed"] == ["flip"] and diff["newly_failing"] == []
    assert [c["op"] for c in diff["faster"]] == ["steady"] and diff["slower"] == []


def test_a_run_compared_with_itself_has_no_change(two_runs):
    proc = reduce(two_runs[0], "--baseline", two_runs[0])
    assert proc.returncode == 0
    diff = json.loads((two_runs[0] / "baseline_diff.json").read_text())
    assert diff["slower"] == [] and diff["faster"] == [] and diff["newly_failing"] == []


@pytest.mark.parametrize("args, words", [(["/nonexistent"], "not a run folder"),
                                         (["RUN", "--baseline", "/nonexistent"], "no summary.json")])
def test_bad_input_is_exit_2(two_runs, args, words):
    args = [str(two_runs[0]) if a == "RUN" else a for a in args]
    proc = reduce(*args)
    assert proc.returncode == 2 and words in proc.stderr


def test_the_parts_of_a_manifest_merge_into_the_whole_run(tmp_path):
    # --part I/N keeps the operators at manifest positions I mod N (a Slurm
    # array task's part); opverify-reduce --merge joins the parts. --shard,
    # its old name, still means the same (the last part is asked by it).
    manifest = os.path.join(ROOT, "jobs", "cpu_smoke.json")
    order = ["relu_ok", "quant_ok", "transpose_ok", "golden_fallback", "hidden_state_ok"]
    whole = tmp_path / "whole"
    assert batch(manifest, whole, "--no-bench").returncode == 0
    parts = [tmp_path / f"part{i}" for i in range(3)]
    for i, part in enumerate(parts):
        proc = batch(manifest, part, "--no-bench", "--shard" if i == 2 else "--part", f"{i}/3")
        assert proc.returncode == 0, proc.stderr[-3000:]
        summary = json.loads((part / "summary.json").read_text())
        assert summary["part"] == f"{i}/3" and "shard" not in summary
        assert sorted(o["name"] for o in summary["operators"]) == sorted(order[i::3])
    merged = tmp_path / "merged"
    for attempt in range(2):  # merging again remakes the same folder
        proc = reduce(merged, "--merge", *parts)
        assert proc.returncode == 0, proc.stderr
        assert verdicts(merged) == verdicts(whole)
        assert len(list((merged / "shards").glob("rank-0000*.h5"))) == 3
    summary = json.loads((merged / "summary.json").read_text())
    assert summary["merged_from"] == [str(p) for p in parts] and summary["ranks"] == 3
    import jsonschema  # python3-jsonschema (tools/dev)
    with open(os.path.join(ROOT, "schemas", "summary.schema.json")) as f:
        schema = json.load(f)
    jsonschema.validate(summary, schema)
    jsonschema.validate(json.loads((parts[1] / "summary.json").read_text()), schema)
    assert summary["totals"] == json.loads((whole / "summary.json").read_text())["totals"]
    refused = reduce(whole, "--merge", parts[0])
    assert refused.returncode == 2 and "not of a merge" in refused.stderr
    assert verdicts(whole) == verdicts(merged)  # the run folder was left alone


def test_a_parts_persistent_cache_kept_under_its_old_name_is_taken_over(tmp_path):
    # --cache-dir DIR with --part I/N keeps each rank's cache in DIR/part-I-of-N/;
    # one kept under the old name (DIR/shard-I-of-N/) is moved there, not lost.
    old = tmp_path / "cache" / "shard-1-of-3" / "rank-0000"
    old.mkdir(parents=True)
    (old / "kept").write_text("compiled last night")
    proc = batch(os.path.join(ROOT, "jobs", "cpu_smoke.json"), tmp_path / "run", "--no-bench",
                 "--part", "1/3", "--cache-dir", str(tmp_path / "cache"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert (tmp_path / "cache" / "part-1-of-3" / "rank-0000" / "kept").read_text() == "compiled last night"
    assert not (tmp_path / "cache" / "shard-1-of-3").exists()


@pytest.mark.parametrize("part", ["3/3", "1", "-1/2", "1/0", "a/b"])
def test_a_bad_part_is_exit_2(tmp_path, part):
    proc = batch(os.path.join(ROOT, "jobs", "cpu_smoke.json"), tmp_path / "run", "--part", part)
    assert proc.returncode == 2 and "--part" in proc.stderr
    assert not (tmp_path / "run").exists()


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def render(html, tmp_path):
    """The page as Chromium leaves it after loading (headless, no network), and a screenshot of it."""
    if CHROMIUM is None:
        pytest.fail("chromium is not installed (tools/dev installs it)")
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-extensions",
             "--no-first-run"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", f"file://{html}"], capture_output=True, text=True,
                         timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    shot = tmp_path / "shot.png"
    subprocess.run([CHROMIUM, *flags, f"--screenshot={shot}", "--window-size=1200,1600", f"file://{html}"],
                   capture_output=True, timeout=120)
    return dom.stdout, shot


def png_size(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")


def test_html_report_renders_in_a_browser(two_runs, tmp_path):
    html = two_runs[1] / "report.html"
    text = html.read_text()
    assert "http://" not in text and "https://" not in text  # self-contained
    # One script, the page's own filter, and the policy that lets no other run.
    assert text.count("<script") == 1 and "script-src 'sha256-" in text and "default-src 'none'" in text
    dom, shot = render(html, tmp_path)
    assert '<table class="grid">' in dom and 'id="filter"' in dom
    for op in ("steady", "flip", "loud"):
        assert f"<tr><th>{op}</th>" in dom
    assert dom.count('class="bar"') >= 1 and 'id="speedup-chart"' in dom
    assert dom.count('class="fail"') >= 2  # flip and loud
    # The operator's words are text on the page, not markup.
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; 'quoted'" in dom
    assert dom.count("<script") == 1 and "<script>alert" not in dom
    assert png_size(shot) == (1200, 1600) and shot.stat().st_size > 20_000  # a page was drawn, not a blank


def test_markup_in_a_stored_operator_name_is_shown_as_text(two_runs, tmp_path):
    """Manifests allow only [A-Za-z0-9_-] names; a store written by anything
    else may hold any name. opverify-reduce must show it as text."""
    h5py = pytest.importorskip("h5py")
    run = tmp_path / "tampered"
    shutil.copytree(two_runs[1], run)
    evil = "<script>alert(1)</script>"
    for shard in (run / "shards").glob("*.h5"):
        with h5py.File(shard, "r+") as f:
            for name in f["cases"]:
                attrs = f["cases"][name].attrs
                if attrs["op_name"] in ("loud", b"loud"):
                    attrs["op_name"] = evil
    proc = reduce(run)
    # The run's plan has "loud", and the store no longer does: results lost.
    assert proc.returncode == 3 and "results missing: loud: no results stored" in proc.stderr, proc.stderr
    dom, _ = render(run / "report.html", tmp_path)
    assert "<tr><th>&lt;script&gt;alert(1)&lt;/script&gt;</th>" in dom
    assert dom.count("<script") == 1 and "<script>alert" not in dom
    check = subprocess.run(["xmllint", "--noout", "--schema", os.path.join(ROOT, "schemas", "junit.xsd"),
                            str(run / "junit.xml")], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    suites = [s.get("name") for s in ET.parse(run / "junit.xml").getroot().findall("testsuite")]
    assert evil in suites and "opverify.store" in suites
    # Its files stay under ops/, in a folder named for it but never by it.
    assert not (run / "ops" / "<script>alert(1)<").exists()
    assert len(list((run / "ops").glob("script_alert_1_script-*/verify_result.json"))) == 1


def test_history_draws_a_trend_per_operator_in_report_html(two_runs, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(two_runs[0], run)
    device = json.loads((run / "ops" / "steady" / "verify_result.json").read_text())["environment"]["device"]["name"]
    history = tmp_path / "history.jsonl"
    lines = [{"date": "2026-11-29", "commit": "<old>", "op": "steady", "device": device, "geomean_latency_ms": 9.0,
              "run": "/nightly/1"},
             {"date": "2026-11-30", "commit": "c2", "op": "steady", "device": "another device",
              "geomean_latency_ms": 1.0, "run": "/nightly/2"}]  # another device's night is not in the trend
    history.write_text("".join(json.dumps(line) + "\n" for line in lines))
    proc = reduce(run, "--history", history)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    html = (run / "report.html").read_text()
    row = html[html.index('<tbody id="op-steady"'):]
    row = row[:row.index("</tbody>")]
    assert '<svg class="spark"' in row and "<title>2 nights, 2026-11-29 to " in row
    assert " to 9 ms, last " in row  # tonight's microseconds against the planted 9 ms
    assert "(&lt;old&gt;)" not in row  # the last night's commit is tonight's
    flip = html[html.index('<tbody id="op-flip"'):html.index('<tbody id="op-loud"')]
    assert '<svg class="spark"' not in flip  # one night (tonight's) is no trend yet
