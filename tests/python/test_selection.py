"""opverify-batch's selection (--filter, --exclude, --tag, --dtype, --list,
--rerun-failed), `opverify verify --case N`, and junit.xml: <error> for cases
that could not be judged, <skipped> for cases not run, latency and speedup
properties; checked with xmllint against schemas/junit.xsd and read back by a
real JUnit consumer, Debian's python3-junitparser. Real runs on the cpu
backend over tests/fixtures/cpu_ops."""
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
CPU_OPS = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")


def program(name):
    path = os.path.join(BUILD, "reduce" if name == "opverify-reduce" else "runner", name)
    assert os.access(path, os.X_OK), path
    return path


def batch(manifest, *flags):
    return subprocess.run([program("opverify-batch"), str(manifest), "--backend", "cpu", "--no-ab", *map(str, flags)],
                          capture_output=True, text=True, timeout=600)


def reduce(*args):
    return subprocess.run([program("opverify-reduce"), *map(str, args)], capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def manifest(tmp_path_factory):
    path = tmp_path_factory.mktemp("selection") / "jobs.json"
    op = lambda name, tags, **extra: {"name": name, "dir": CPU_OPS, "tags": tags, **extra}  # noqa: E731
    path.write_text(json.dumps({"name": "selection_test", "defaults": {
        "impl_name": "cpu_impl", "lint": False, "timeout_s": 60, "bench": {"warmup": 1, "repeats": 5}},
        "operators": [op("relu_ok", ["fast"]), op("crash_second_case", ["bad"]), op("import_bad", ["bad"]),
                      op("nan_bad", ["bad"]),
                      op("add_sweep", ["fast"], sweep={"n": [8, 16], "dtype": ["float32", "bfloat16"]})]}))
    return path


@pytest.fixture(scope="module")
def first_run(manifest):
    run = manifest.parent / "first"
    proc = batch(manifest, "--run-dir", run, "--exclude", "nan_bad", "--exclude", "add_sweep/*bfloat16*")
    assert proc.returncode == 1, proc.stderr[-3000:]
    return run


def stored_ids(run):
    """The ids of the cases a run ran, from its junit.xml (every testcase that is not skipped)."""
    root = ET.parse(run / "junit.xml").getroot()
    return sorted(c.get("name") for c in root.iter("testcase") if c.find("skipped") is None)


def listed(manifest, *flags):
    proc = batch(manifest, "--list", *flags)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout.split()


def test_junit_errors_skipped_and_properties_validate_and_read_back(first_run):
    junit = first_run / "junit.xml"
    check = subprocess.run(["xmllint", "--noout", "--schema", os.path.join(ROOT, "schemas", "junit.xsd"), str(junit)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    junitparser = pytest.importorskip("junitparser")
    xml = junitparser.JUnitXml.fromfile(str(junit))
    results = {}
    properties = {}
    for suite in xml:
        for case in suite:
            results[case.name] = [(type(r).__name__, r.type if hasattr(r, "type") else None, r.message)
                                  for r in case.result]
            props = case.child(junitparser.Properties)
            properties[case.name] = {p.name: p.value for p in props} if props is not None else {}
    # Could not be judged: <error>, not <failure>.
    assert results["crash_second_case/#2"][0][:2] == ("Error", "Crash")
    assert results["crash_second_case/#1"] == [] and results["crash_second_case/#3"] == []
    assert results["import_bad/#1"][0][:2] == ("Error", "ImportError")
    # Left out by the selection: <skipped>, saying which flag.
    assert results["nan_bad"][0][0] == "Skipped" and "--exclude 'nan_bad'" in results["nan_bad"][0][2]
    bf16 = [n for n in results if n.startswith("add_sweep/") and "bfloat16" in n]
    assert len(bf16) == 2 and all(results[n][0][0] == "Skipped" and "add_sweep/*bfloat16*" in results[n][0][2]
                                  for n in bf16)
    # relu_ok passed and was benchmarked: each case carries its shape's numbers.
    for i in range(1, 5):
        props = properties[f"relu_ok/#{i}"]
        assert float(props["latency_ms"]) > 0 and float(props["speedup"]) > 0 and float(props["framework_latency_ms"]) > 0
    # The float32 half of the sweep passed alone, so it was benchmarked too.
    f32 = [n for n in results if n.startswith("add_sweep/") and "float32" in n]
    assert len(f32) == 2 and all(results[n] == [] and "latency_ms" in properties[n] for n in f32)
    root = ET.parse(junit).getroot()
    assert root.get("errors") == "2" and root.get("failures") == "0" and root.get("skipped") == "3"
    assert int(root.get("tests")) == 4 + 3 + 1 + 1 + 4
    suites = {s.get("name"): s for s in root.findall("testsuite")}
    assert suites["import_bad"].get("errors") == "1" and suites["add_sweep"].get("skipped") == "2"
    assert float({p.get("name"): p.get("value") for p in suites["relu_ok"].iter("property")}["speedup"]) > 0
    suite = next(s for s in xml if s.name == "relu_ok")
    assert float({p.name: p.value for p in suite.properties()}["latency_ms"]) > 0
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (4, 0, 0, 0)
    # selection.json records what was asked.
    selection = json.loads((first_run / "selection.json").read_text())
    assert selection["selection"]["exclude"] == ["nan_bad", "add_sweep/*bfloat16*"]


def test_list_prints_the_ids_the_run_then_uses(manifest, tmp_path):
    flags = ["--filter", "relu_ok", "--filter", "add_sweep", "--dtype", "float32"]
    ids = listed(manifest, *flags)
    # relu_ok's dtypes are its inputs' (#4 is bfloat16), known when it runs: --list imports no task
    # file, so it gives the glob those ids match; add_sweep's are its parameter's.
    assert ids == ["relu_ok/#*", 'add_sweep/{"dtype":"float32","n":8}', 'add_sweep/{"dtype":"float32","n":16}']
    proc = batch(manifest, "--run-dir", tmp_path / "run", *flags)
    assert proc.returncode == 0, proc.stderr[-3000:]
    stored = stored_ids(tmp_path / "run")
    assert [i for i in stored if i.startswith("relu_ok/")] == ["relu_ok/#1", "relu_ok/#2", "relu_ok/#3"]
    assert all(any(fnmatch.fnmatchcase(i, pattern) for pattern in ids) for i in stored)
    assert all(i in stored for i in ids if not i.endswith("*"))
    root = ET.parse(tmp_path / "run" / "junit.xml").getroot()
    skipped = {c.get("name"): c.find("skipped").get("message") for c in root.iter("testcase")
               if c.find("skipped") is not None}
    assert "dtype bfloat16 not in --dtype" in skipped["relu_ok/#4"]
    assert "no match of --filter" in skipped["nan_bad"]


def test_tag_exclude_and_case_globs(manifest):
    assert listed(manifest, "--tag", "bad", "--exclude", "import_bad", "--exclude", "*/#2") == \
        ["crash_second_case/#1", "crash_second_case/#3", "nan_bad/#1"]
    assert listed(manifest, "--filter", "relu_ok/#3", "--filter", "*n\":16*") == \
        ["relu_ok/#3", 'add_sweep/{"dtype":"float32","n":16}', 'add_sweep/{"dtype":"bfloat16","n":16}']
    # A selection that matches no operator is an error, not an empty run that passes.
    empty = batch(manifest, "--list", "--tag", "nothing")
    assert empty.returncode == 2 and "matches none" in empty.stderr


def test_rerun_failed_runs_exactly_the_failed_cases(manifest, first_run, tmp_path):
    failed = sorted(c.get("name") for c in ET.parse(first_run / "junit.xml").getroot().iter("testcase")
                    if c.find("error") is not None or c.find("failure") is not None)
    assert failed == ["crash_second_case/#2", "import_bad/#1"]
    assert sorted(listed(manifest, "--rerun-failed", first_run)) == failed
    proc = batch(manifest, "--run-dir", tmp_path / "again", "--rerun-failed", first_run)
    assert proc.returncode == 1, proc.stderr[-3000:]  # they fail again
    assert stored_ids(tmp_path / "again") == failed
    assert (first_run / "summary.json").exists()  # the old run is left as it was
    clean = tmp_path / "clean"
    assert batch(manifest, "--run-dir", clean, "--filter", "relu_ok").returncode == 0
    proc = batch(manifest, "--run-dir", tmp_path / "nothing", "--rerun-failed", clean)
    assert proc.returncode == 0 and "no case failed there" in proc.stdout
    assert not (tmp_path / "nothing").exists()
    proc = batch(manifest, "--rerun-failed", tmp_path)
    assert proc.returncode == 2 and "not a run folder" in proc.stderr


def test_verify_case_runs_one_case_numbered_as_verify_result(tmp_path):
    out = tmp_path / "verify_result.json"
    proc = subprocess.run([program("opverify"), "verify", "--op_name", "crash_second_case", "--verify_dir", CPU_OPS,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--case", "2",
                           "--output", out], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["total_cases"] == 1 and result["failed_cases"] == 1
    assert [f["case_idx"] for f in result["failures"]] == [2]
    proc = subprocess.run([program("opverify"), "verify", "--op_name", "crash_second_case", "--verify_dir", CPU_OPS,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--case", "1",
                           "--output", out], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and json.loads(out.read_text())["total_cases"] == 1
    proc = subprocess.run([program("opverify"), "verify", "--op_name", "crash_second_case", "--verify_dir", CPU_OPS,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--case", "9",
                           "--output", out], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and "--case 9" in proc.stderr


def test_references_fail_with_performance_error_naming_operator_and_shape(first_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(first_run, run)
    sys.path.insert(0, os.path.join(BUILD, "python"))
    import opverify
    loaded = opverify.load_run(str(run))
    relu = loaded["operators"]["relu_ok"]["performance"]
    device = relu["device"]
    shape_ms = {s["case_idx"]: s["implementation"]["latency_ms"] for s in relu["shapes"]}
    add_ms = loaded["operators"]["add_sweep"]["performance"]["geomean_latency_ms"]
    references = tmp_path / "references.json"
    ok = {device: {"add_sweep": {"latency_ms": add_ms, "lower": -0.5, "upper": 0.5},
                   "nan_bad": {"latency_ms": 1.0, "upper": 0.1}}}
    references.write_text(json.dumps(ok))
    proc = reduce(run, "--references", references)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    check = json.loads((run / "reference_check.json").read_text())
    assert check["violations"] == 0 and check["unmeasured"] == 1  # nan_bad was not run
    bad = dict(ok)
    bad[device] = dict(ok[device], **{"relu_ok/#2": {"latency_ms": shape_ms[2] / 10, "upper": 0.5}})
    references.write_text(json.dumps(bad))
    proc = reduce(run, "--references", references)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"PerformanceError: relu_ok shape relu_ok/#2 on {device}" in proc.stdout
    check = json.loads((run / "reference_check.json").read_text())
    assert check["violations"] == 1
    assert [r["error_type"] for r in check["results"] if not r["passed"]] == ["PerformanceError"]
    # "*" applies to every device without a table of its own.
    references.write_text(json.dumps({"*": {"relu_ok": {"latency_ms": 1e6, "lower": -0.5}}}))
    proc = reduce(run, "--references", references)
    assert proc.returncode == 1 and "PerformanceError: relu_ok (geometric mean over its shapes)" in proc.stdout
    references.write_text(json.dumps({"*": {"relu_ok": {"latency_ms": "fast"}}}))
    proc = reduce(run, "--references", references)
    assert proc.returncode == 2 and '"relu_ok"' in proc.stderr


def test_history_appends_one_line_per_operator_and_night(first_run, tmp_path):
    run = tmp_path / "run"
    shutil.copytree(first_run, run)
    history = tmp_path / "history.jsonl"
    for _ in range(2):  # reducing the same run again appends nothing
        proc = reduce(run, "--history", history, "--history-commit", "abc123")
        assert proc.returncode == 0, proc.stderr
    lines = [json.loads(line) for line in history.read_text().splitlines()]
    assert sorted(line["op"] for line in lines) == ["add_sweep", "crash_second_case", "import_bad", "relu_ok"]
    for line in lines:
        assert line["commit"] == "abc123"
        assert len(line["date"]) == 10 and line["date"][4] == "-" and line["run"] == str(run)
    # A latency where benchmarked (the operators whose every case passed).
    assert sorted(line["op"] for line in lines if line.get("geomean_latency_ms", 0) > 0) == ["add_sweep", "relu_ok"]
    assert {line["op"]: line["verdict"] for line in lines}["relu_ok"] == "passed"
    proc = reduce(run, "--history", history)  # the build's commit by default; the run is there already
    assert proc.returncode == 0 and len(history.read_text().splitlines()) == 4


def test_history_lines_of_other_shapes_are_kept_not_fatal(first_run, tmp_path):
    # The history file is the user's: a line whose fields are numbers, or
    # missing, is nobody's run and not an error.
    run = tmp_path / "run"
    shutil.copytree(first_run, run)
    history = tmp_path / "history.jsonl"
    odd = ['{"run": 5, "op": 7, "date": 1, "geomean_latency_ms": "x"}', '{}']
    history.write_text("\n".join(odd) + "\n")
    proc = reduce(run, "--history", history, "--history-commit", "abc123")
    assert proc.returncode == 0, proc.stderr
    lines = history.read_text().splitlines()
    assert lines[:2] == odd
    assert sorted(json.loads(line)["op"] for line in lines[2:]) == ["add_sweep", "crash_second_case", "import_bad",
                                                                    "relu_ok"]


def test_load_run_returns_cases_verdicts_metrics_and_performance(first_run):
    sys.path.insert(0, os.path.join(BUILD, "python"))
    import numpy as np
    import opverify
    version = subprocess.run([program("opverify"), "--version"], capture_output=True, text=True).stdout
    assert opverify.__version__ and opverify.__version__ in version
    run = opverify.load_run(str(first_run))
    assert run["totals"] == {"operators": 4, "cases": 10, "passed": 8, "waived": 0, "failed": 2}
    assert run["verdicts"]["crash_second_case/#2"] == "Crash" and run["verdicts"]["relu_ok/#1"] == "passed"
    case = next(c for c in run["cases"] if c["case_id"] == "relu_ok/#4")
    assert case["index"] == 3 and case["number"] == 4 and case["input_desc"][0]["dtype"].endswith("bfloat16")
    assert case["verdicts"][0]["passed"] and "metrics" in case["verdicts"][0]
    metrics = run["metrics"]
    assert isinstance(metrics["passed"], np.ndarray) and metrics["passed"].dtype == bool
    assert len(metrics["case_id"]) == len(run["cases"]) == 10
    assert list(metrics["case_id"][~metrics["passed"]]) == ["crash_second_case/#2", "import_bad/#1"]
    assert np.isnan(metrics["max_rel_diff"][~metrics["passed"]]).all()
    assert (metrics["max_rel_diff"][metrics["passed"]] >= 0).all()
    perf = run["operators"]["relu_ok"]["performance"]
    assert len(perf["shapes"]) == 4 and perf["speedup"] > 0 and perf["geomean_latency_ms"] > 0
    assert run["operators"]["import_bad"]["performance"] is None
    assert {s["case_id"] for s in run["skipped"]} >= {"nan_bad"}
    with pytest.raises(ValueError, match="not a run folder"):
        opverify.load_run(str(first_run / "ops"))


def _renumber_from_zero(case_id):
    """A task's own case id as format_version 1 wrote it: op/#N numbered from 0."""
    head, sep, tail = case_id.rpartition("/#")
    number, at, rest = tail.partition("@")
    return f"{head}/#{int(number) - 1}{at}{rest}" if sep and number.isdigit() else case_id


def test_a_format_1_run_folder_is_read_with_todays_ids(manifest, first_run, tmp_path):
    # first_run as an opverify of format_version 1 left it: ids from #0 in shards and journals.
    h5py = pytest.importorskip("h5py")
    import numpy as np
    old = tmp_path / "old"
    shutil.copytree(first_run, old)
    for shard in (old / "shards").glob("*.h5"):
        with h5py.File(shard, "r+") as f:
            f.attrs["format_version"] = np.int64(1)
            for name in f["cases"]:
                attrs = f["cases"][name].attrs
                attrs["case_id"] = _renumber_from_zero(attrs["case_id"])
                extra = json.loads(attrs["extra"])
                if "case_id" in extra:
                    extra["case_id"] = _renumber_from_zero(extra["case_id"])
                    attrs["extra"] = json.dumps(extra)
    for journal in (old / "shards").glob("*.journal"):
        lines = [json.loads(line) for line in journal.read_text().splitlines()]
        journal.write_text("".join(json.dumps(dict(e, case_id=_renumber_from_zero(e["case_id"]))) + "\n"
                                   for e in lines))
    assert "crash_second_case/#1" in (old / "shards" / "rank-0000.journal").read_text()
    # Reported, re-run and listed with the ids of today's numbering.
    proc = reduce(old)
    assert proc.returncode == 0 and "8 passed, 2 failed" in proc.stdout, proc.stdout + proc.stderr
    assert stored_ids(old) == stored_ids(first_run)
    assert sorted(listed(manifest, "--rerun-failed", old)) == ["crash_second_case/#2", "import_bad/#1"]
    with h5py.File(old / "results.h5", "r") as f:
        assert f.attrs["format_version"] == 3 and f.attrs["cases"] == 10  # results.h5 is rewritten in today's format


def test_tag_check_reads_a_run_folders_junit_against_the_tags(manifest, first_run, tmp_path):
    """tools/tag_check.py on a run folder: its junit.xml's testcases by operator (classname),
    <failure>/<error> failed, <skipped> not run (nan_bad and half of add_sweep were left out)."""
    job = json.loads(manifest.read_text())
    tags = {"import_bad": ["library-defect"], "relu_ok": ["reference-suspect"], "nan_bad": ["library-defect"]}
    for op in job["operators"]:
        op["tags"] = tags.get(op["name"], op["tags"])
    tagged = tmp_path / "tagged.json"
    tagged.write_text(json.dumps(job))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "tag_check.py"), str(tagged), str(first_run)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "STALE relu_ok: tagged reference-suspect, and its 4 cases passed", lines
    assert lines[1].startswith("UNEXPLAINED crash_second_case: crash_second_case/#2 Crash: "), lines
    assert lines[2] == "1 unexplained, 0 missed, 1 stale, 1 expected, 1 passed, 1 not run (of 5 operators)", lines
