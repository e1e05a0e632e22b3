"""Declared exceptions (allow_torch, docs/MANIFEST.md): torch operators a library uses outside its
kernels by design, accepted visibly. Real `opverify-batch`, `opverify-reduce`, `opverify verify`
and `opverify lint` on the cpu backend over tests/fixtures/waiver (a library that sorts on the
host before its kernel scales; the static lint's type 3 works on the CPU), and the matching
rules of opverify_runtime/allowances.py (static and runtime findings) in-process."""
import json
import os
import subprocess
import types
import xml.etree.ElementTree as ET

import pytest

from opverify_runtime import allowances, lint

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
FIXTURE = os.path.join(ROOT, "tests", "fixtures", "waiver")
OPS_PY = os.path.join(FIXTURE, "waivelib", "ops.py")
MANIFEST = os.path.join(FIXTURE, "waiver.json")
LIBRARY_AT = MANIFEST + ":/libraries/waivelib/allow_torch/0"
TOPK_AT = MANIFEST + ":/operators/3/allow_torch/0"
SORT_WHY = "sorts on the host side before the kernel, by design"


def program(name):
    path = os.path.join(BUILD, "reduce" if name == "opverify-reduce" else "runner", name)
    assert os.access(path, os.X_OK), path
    return path


def read_json(path):
    with open(path) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("waiver")
    run_dir, progress = folder / "run", folder / "progress.jsonl"
    proc = subprocess.run([program("opverify-batch"), MANIFEST, "--backend", "cpu", "--no-ab", "--run-dir",
                           str(run_dir), "--progress", f"jsonl={progress}"],
                          capture_output=True, text=True, timeout=900)
    return types.SimpleNamespace(proc=proc, dir=run_dir, progress=progress)


# ---- the batch and every report --------------------------------------------------------------

def test_only_allowed_operators_pass_as_waived_and_the_console_says_so(run):
    proc = run.proc
    assert proc.returncode == 1, proc.stderr[-3000:]  # the wrong and the not-allowed cases fail
    assert "4 operators, 6 cases: 1 passed, 2 waived, 3 failed" in proc.stdout, proc.stdout
    waived = [line for line in proc.stdout.splitlines() if line.startswith("WAIVED ")]
    assert [line.split()[1] for line in waived] == ["sorted_scale/#1", "sorted_scale/#2"]
    assert f"torch.sort ({SORT_WHY}) [library waivelib]" in waived[0]
    assert f"warning: allowance aten::topk ({TOPK_AT}) was not needed by any case of plain_scale: stale" \
        in proc.stderr


def test_summary_counts_and_lists_waived_cases_and_stale_allowances(run):
    summary = read_json(run.dir / "summary.json")
    assert summary["totals"]["passed"] == 1 and summary["totals"]["waived"] == 2
    assert summary["totals"]["failed"] == 3 and summary["totals"]["cases"] == 6
    ops = {op["name"]: op for op in summary["operators"]}
    assert (ops["sorted_scale"]["passed"], ops["sorted_scale"]["waived"], ops["sorted_scale"]["failed"]) == (0, 2, 0)
    assert (ops["plain_scale"]["passed"], ops["plain_scale"]["waived"]) == (1, 0)
    assert [w["case_id"] for w in summary["waived"]] == ["sorted_scale/#1", "sorted_scale/#2"]
    (waiver,) = summary["waived"][0]["waivers"]
    assert (waiver["op"], waiver["operator"], waiver["why"], waiver["library"], waiver["declared_at"]) == \
        ("torch.sort", "aten::sort", SORT_WHY, "waivelib", LIBRARY_AT)
    assert waiver["found"] == [{"name": "torch.sort", "file": OPS_PY, "line": 26, "source": "static"}]
    states = {(a["op"], a["declared_at"]): a for a in summary["allow_torch"]}
    library = states[("torch.sort", LIBRARY_AT)]
    assert library["state"] == "used" and library["library"] == "waivelib"
    assert library["operators"] == ["plain_scale", "sorted_cumsum", "sorted_scale", "sorted_scale_wrong"]
    assert library["cases"] == 5  # sorted_scale's 2, the wrong one's 2 and sorted_cumsum's 1 needed it
    stale = states[("aten::topk", TOPK_AT)]
    assert (stale["state"], stale["operators"], stale["cases"]) == ("stale", ["plain_scale"], 0)
    validator = pytest.importorskip("jsonschema")
    validator.validate(summary, read_json(os.path.join(ROOT, "schemas", "summary.schema.json")))


def test_a_waived_but_wrong_output_fails_with_the_judges_error(run):
    summary = read_json(run.dir / "summary.json")
    wrong = [f for f in summary["failures"] if f["op"] == "sorted_scale_wrong"]
    assert [f["error_type"] for f in wrong] == ["AccuracyError", "AccuracyError"]
    result = read_json(run.dir / "ops" / "sorted_scale_wrong" / "verify_result.json")
    assert result["failed_cases"] == 2 and result["opverify"]["waived_cases"] == 0
    details = result["opverify"]["cases"][0]
    assert details["verdict"] == "failed" and details["waivers"][0]["declared_at"] == LIBRARY_AT


def test_one_allowed_and_one_not_allowed_operator_fails_with_type_3_naming_the_other(run):
    summary = read_json(run.dir / "summary.json")
    (failure,) = [f for f in summary["failures"] if f["op"] == "sorted_cumsum"]
    assert failure["error_type"] == "LintError"
    assert f"regression type 3 (first: {OPS_PY}:31: torch.cumsum" in failure["error_msg"]
    checks = read_json(run.dir / "ops" / "sorted_cumsum" / "verify_result.json")["opverify"]["lint"]["checks"]
    forbidden = checks["no_forbidden_torch_ops"]
    assert [v["op"] for v in forbidden["violations"]] == ["torch.cumsum"]
    assert [(v["op"], v["allowed_by"]) for v in forbidden["allowed"]] == [("torch.sort", LIBRARY_AT)]


def test_verify_result_json_marks_each_case_and_each_allowance(run):
    result = read_json(run.dir / "ops" / "sorted_scale" / "verify_result.json")
    assert result["passed_cases"] == 2 and result["failed_cases"] == 0  # the seed's fields: not failed
    assert result["opverify"]["waived_cases"] == 2
    assert [c["verdict"] for c in result["opverify"]["cases"]] == ["waived", "waived"]
    assert result["opverify"]["lint"]["valid"] is True
    assert result["opverify"]["lint"]["allow_torch"]["waived"][0]["declared_at"] == LIBRARY_AT
    plain = read_json(run.dir / "ops" / "plain_scale" / "verify_result.json")
    assert [c["verdict"] for c in plain["opverify"]["cases"]] == ["passed"]
    assert {a["op"]: a["state"] for a in plain["opverify"]["allow_torch"]} == {"aten::topk": "stale",
                                                                               "torch.sort": "stale"}


def test_report_md_and_html_show_waived_cases_and_stale_allowances(run):
    md = (run.dir / "report.md").read_text()
    assert "- operators: 4, cases: 6, passed: 1, waived: 2, failed: 3" in md
    assert "| sorted_scale | 2 | 0 (+2 waived) | 0 |" in md
    assert "## Waived (declared exceptions)" in md
    assert f"| sorted_scale/#1 | `torch.sort` | {SORT_WHY} | {OPS_PY}:26 (static) |" in md
    assert "## Stale allowances" in md and f"allowance aten::topk ({TOPK_AT})" in md
    html = (run.dir / "report.html").read_text()
    assert "2 waived</a>" in html and 'id="declared-exceptions"' in html
    assert 'id="stale-allowances"' in html and "aten::topk" in html
    assert '<tr class="case waived"><td colspan=' in html and "sorted_scale/#2 <b>waived</b>" in html
    precision = (run.dir / "ops" / "sorted_scale" / "precision_report.md").read_text()
    assert "- passed: 2 (2 waived: declared exceptions" in precision


def test_junit_passes_a_waived_case_and_names_its_waiver(run):
    junit = run.dir / "junit.xml"
    check = subprocess.run(["xmllint", "--noout", "--schema", os.path.join(ROOT, "schemas", "junit.xsd"), str(junit)],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    root = ET.parse(junit).getroot()
    assert root.get("failures") == "3" and root.get("errors") == "0"
    cases = {c.get("name"): c for c in root.iter("testcase")}
    waived = cases["sorted_scale/#1"]
    assert waived.get("status") == "waived" and waived.find("failure") is None and waived.find("error") is None
    props = {p.get("name"): p.get("value") for p in waived.iter("property")}
    assert props["verdict"] == "waived"
    assert props["waiver"] == f"torch.sort: {SORT_WHY} [{LIBRARY_AT}]"
    assert f"{OPS_PY}:26 (static)" in waived.find("system-out").text
    assert cases["plain_scale/#1"].get("status") is None
    suite = next(s for s in root.findall("testsuite") if s.get("name") == "plain_scale")
    stale = [p.get("value") for p in suite.iter("property") if p.get("name") == "stale_allowance"]
    assert len(stale) == 1 and "aten::topk" in stale[0]
    junitparser = pytest.importorskip("junitparser")
    for suite in junitparser.JUnitXml.fromfile(str(junit)):
        for case in suite:
            if case.name.startswith("sorted_scale/"):
                assert case.is_passed, case.name  # what a CI reading junit.xml sees: a pass


def test_the_store_keeps_the_waived_verdict(run):
    h5py = pytest.importorskip("h5py")
    verdicts = {}
    for shard in (run.dir / "shards").glob("rank-*.h5"):
        with h5py.File(shard, "r") as f:
            assert f.attrs["format_version"] == 3
            for group in f["cases"].values():
                if json.loads(group.attrs["extra"]).get("kind") is None:
                    verdicts[group.attrs["case_id"]] = group.attrs["verdict"]
    assert verdicts["sorted_scale/#1"] == "waived" and verdicts["plain_scale/#1"] == "passed"
    assert verdicts["sorted_cumsum/#1"] == "failed"
    with h5py.File(run.dir / "results.h5", "r") as f:
        assert (f.attrs["passed"], f.attrs["waived"], f.attrs["failed"]) == (1, 2, 3)
    lines = [json.loads(line) for line in run.progress.read_text().splitlines()]
    assert {line["case_id"]: line["verdict"] for line in lines}["sorted_scale/#2"] == "waived"


def test_opverify_reduce_reports_the_same_from_the_store(run):
    proc = subprocess.run([program("opverify-reduce"), str(run.dir)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr  # the reports were written (failures are not its exit code)
    assert "4 operators, 6 cases: 1 passed, 2 waived, 3 failed" in proc.stdout
    assert "WAIVED sorted_scale/#1" in proc.stdout and "aten::topk" in proc.stderr
    assert read_json(run.dir / "summary.json")["totals"]["waived"] == 2


# ---- opverify verify and opverify lint ----------------------------------------------------------

def cli(command, op, *flags):
    return subprocess.run([program("opverify"), command, *flags] if command == "lint" else
                          [program("opverify"), command, "--op_name", op, "--verify_dir",
                           os.path.join(FIXTURE, "ops"), "--triton_impl_name", "cpu_impl", "--backend", "cpu",
                           "--seeds", "1", *flags], capture_output=True, text=True, timeout=600)


LIBRARY_FLAGS = ["--library", "waivelib", "--python-path", os.path.join(FIXTURE, "triton_cpu"), "--python-path",
                 FIXTURE]


def test_verify_allow_torch_flag(tmp_path):
    out = tmp_path / "verify_result.json"
    waived = cli("verify", "sorted_scale", *LIBRARY_FLAGS, "--allow-torch", "aten::sort.stable=host sort by design",
                 "--allow-torch", "Tensor.cumsum=not needed here", "--output", str(out))
    assert waived.returncode == 0, waived.stderr[-3000:]
    assert "sorted_scale: 2/2 cases passed (2 waived: declared exceptions)" in waived.stdout
    assert "allowance Tensor.cumsum (--allow-torch Tensor.cumsum) was not needed by any case: stale" in waived.stderr
    result = read_json(out)
    assert result["opverify"]["waived_cases"] == 2
    assert result["opverify"]["cases"][0]["waivers"][0]["declared_at"] == "--allow-torch aten::sort.stable"
    refused = cli("verify", "sorted_scale", *LIBRARY_FLAGS, "--output", str(tmp_path / "no.json"))
    assert refused.returncode == 1
    assert read_json(tmp_path / "no.json")["failures"][0]["error_type"] == "LintError"
    unexplained = cli("verify", "sorted_scale", *LIBRARY_FLAGS, "--allow-torch", "aten::sort")
    assert unexplained.returncode != 0 and "give OP=WHY" in unexplained.stderr


def test_lint_allow_torch_flag():
    impl = os.path.join(FIXTURE, "ops", "sorted_scale_cpu_impl.py")
    plain = cli("lint", None, impl, *LIBRARY_FLAGS)
    assert plain.returncode == 1
    allowed = cli("lint", None, impl, *LIBRARY_FLAGS, "--allow-torch", "torch.sort=by design", "--allow-torch",
                  "aten::mm=never used")
    assert allowed.returncode == 0, allowed.stdout
    assert f"waived: torch.sort (by design) at {OPS_PY}:26" in allowed.stdout
    assert "warning: allowance aten::mm (--allow-torch aten::mm) was not needed: stale" in allowed.stdout
    as_json = cli("lint", None, impl, *LIBRARY_FLAGS, "--allow-torch", "torch.sort=by design", "--json")
    result = json.loads(as_json.stdout)
    assert result["valid"] and result["regression_type"] is None
    assert result["torch_ops"] == [{"op": "aten::sort", "name": "torch.sort", "file": OPS_PY, "line": 26,
                                    "check": "no_forbidden_torch_ops", "source": "static"}]


def test_a_manifest_allowance_without_a_reason_is_refused(tmp_path):
    job = read_json(MANIFEST)
    job["libraries"]["waivelib"]["allow_torch"][0].pop("why")
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job).replace('"triton_cpu"', json.dumps(os.path.join(FIXTURE, "triton_cpu")))
                    .replace('"."', json.dumps(FIXTURE)).replace('"ops"', json.dumps(os.path.join(FIXTURE, "ops"))))
    proc = subprocess.run([program("opverify-batch"), str(path), "--dry-run"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2
    assert "/libraries/waivelib/allow_torch/0: Missing required property 'why'" in proc.stderr


# ---- the matching rules ---------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", ["torch.sort", "Tensor.sort", "torch.Tensor.sort", "aten::sort",
                                      "aten::sort.stable", "torch.ops.aten.sort.stable", "aten::_sort", "x.sort"])
def test_every_spelling_of_an_operator_is_one_name(spelling):
    assert allowances.normalise(spelling) == "aten::sort"


def test_other_names():
    assert allowances.normalise("torch.nn.functional.gelu") == "aten::gelu"
    assert allowances.normalise("@") == "aten::matmul"
    assert allowances.normalise("torch.linalg.norm") == "aten::linalg_norm"
    assert allowances.normalise("aten::add_") == "aten::add"
    assert allowances.normalise("torch.sum") != allowances.normalise("torch.cumsum")


def fixture_lint(op):
    return lint.lint_file(os.path.join(FIXTURE, "ops", op + "_cpu_impl.py"), library=["waivelib"],
                          python_path=[os.path.join(FIXTURE, "triton_cpu"), FIXTURE])


@pytest.mark.parametrize("where, waived", [
    ("waivelib/ops.py", True), ("waivelib", True), ("waivelib.ops", True), ("waivelib/other.py", False),
    ("ops/sorted_scale_cpu_impl.py", False)])
def test_where_narrows_an_allowance_to_the_uses_made_from_there(where, waived):
    result = allowances.waive_lint(fixture_lint("sorted_scale"),
                                   [{"op": "aten::sort", "why": "w", "where": where, "declared_at": "d"}])
    assert result["valid"] is waived
    assert result["regression_types"] == ([] if waived else [3])


def test_a_librarys_allowance_covers_its_own_files_only():
    impl = "import torch\nfrom waivelib import scale\n\nclass ModelNew(torch.nn.Module):\n" \
           "    def forward(self, x):\n        return scale(torch.sort(x).values, 2.0)\n"
    result = lint.lint_source(impl, "own_impl.py", library=["waivelib"],
                              python_path=[os.path.join(FIXTURE, "triton_cpu"), FIXTURE])
    library = [{"op": "torch.sort", "why": "w", "library": "waivelib", "declared_at": "lib"}]
    assert not allowances.waive_lint(result, library)["valid"]  # the implementation file's own sort
    operator = [{"op": "torch.sort", "why": "w", "declared_at": "op"}]
    assert allowances.waive_lint(lint.lint_source(impl, "own_impl.py", library=["waivelib"], python_path=[
        os.path.join(FIXTURE, "triton_cpu"), FIXTURE]), operator)["valid"]


def test_other_types_are_never_waived():
    source = "import torch\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n        return torch.sort(x)\n"
    result = allowances.waive_lint(lint.lint_source(source, "t_impl.py"),
                                   [{"op": "aten::sort", "why": "w", "declared_at": "d"}])
    assert result["regression_types"] == [1]  # no kernel at all: the sort's waiver does not make it Triton
    assert result["allow_torch"]["waived"][0]["op"] == "aten::sort"


class FakeTrace:
    """What waive_runtime reads of a DispatchTrace: compute operators and their call sites."""

    def __init__(self, ops, sites):
        self.ops, self.sites, self.sites_overflow, self.allowed = ops, sites, set(), set()

    def compute_ops(self):
        return {name: entry for name, entry in self.ops.items() if name not in self.allowed}


def test_runtime_findings_are_waived_per_call_site():
    trace = FakeTrace({"sort": [2, {"cuda"}], "mm": [1, {"cuda"}]},
                      {"sort": {("/x/liger_kernel/ops/sparsemax.py", 40)}, "mm": {("/x/impl.py", 9)}})
    allow = [{"op": "aten::sort", "why": "host sort", "where": "liger_kernel/ops/sparsemax.py", "declared_at": "s"},
             {"op": "aten::mm", "why": "logits", "library": "liger_kernel", "declared_at": "m"}]
    waivers, kernels, inside = allowances.waive_runtime(allow, trace, {"own_k": (1, 5.0)}, {})
    assert [w["declared_at"] for w in waivers] == ["s"]  # mm came from the implementation, not the library
    assert waivers[0]["found"][0] == {"name": "aten::sort", "file": "/x/liger_kernel/ops/sparsemax.py", "line": 40,
                                      "source": "runtime", "calls": 2, "devices": ["cuda"]}
    assert set(trace.compute_ops()) == {"mm"}  # what is left to judge
    assert kernels == {"own_k": (1, 5.0)} and inside == {}


def test_a_call_site_outside_the_narrowed_place_keeps_the_operator_judged():
    trace = FakeTrace({"sort": [2, {"cuda"}]}, {"sort": {("/x/lib/a.py", 1), ("/x/other/b.py", 2)}})
    waivers, _, _ = allowances.waive_runtime([{"op": "aten::sort", "why": "w", "where": "lib", "declared_at": "d"}],
                                             trace, None, {})
    assert waivers == [] and "sort" in trace.compute_ops()


def test_kernels_launched_only_by_allowed_operators_are_not_weighed_as_foreign():
    def event(name, kernels=(), parent=None):
        return types.SimpleNamespace(name=name, kernels=[types.SimpleNamespace(name=k) for k in kernels],
                                     cpu_parent=parent)
    matmul = event("aten::matmul")
    prof = types.SimpleNamespace(events=lambda: [matmul, event("aten::mm", ["sm90_gemm", "shared_k"], matmul),
                                                 event("aten::add", ["shared_k"])])
    trace = FakeTrace({"mm": [1, {"cuda"}]}, {"mm": {("/x/lib/ops.py", 3)}})
    _, kernels, _ = allowances.waive_runtime([{"op": "aten::mm", "why": "logits", "declared_at": "d"}], trace,
                                             {"sm90_gemm": (1, 90.0), "shared_k": (2, 1.0), "own": (1, 10.0)}, {},
                                             prof)
    assert kernels == {"shared_k": (2, 1.0), "own": (1, 10.0)}  # shared_k also ran outside the allowed mm


def test_compute_inside_a_registered_kernel_is_waived_by_a_library_or_unnarrowed_allowance():
    trace = FakeTrace({}, {})
    inside = {"aten::isclose": {"result_type": (3, ["cuda"]), "mul": (1, ["cuda"])}}
    waivers, _, kept = allowances.waive_runtime(
        [{"op": "aten::result_type", "why": "dtype promotion", "library": "flag_gems", "declared_at": "d"}],
        trace, None, inside)
    assert kept == {"aten::isclose": {"mul": (1, ["cuda"])}}
    assert waivers[0]["found"][0]["inside"] == "aten::isclose"


def test_the_call_site_is_the_first_frame_outside_torch_and_opverify():
    import torch
    skipped = allowances.skipped_folders(torch)
    assert allowances.call_site(skipped) == (__file__, test_the_call_site_is_the_first_frame_outside_torch_and_opverify
                                             .__code__.co_firstlineno + 3)
