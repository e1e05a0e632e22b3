"""Reference trust and whole-output degenerate checks, for real: opverify-batch
with A/B on (the cpu backend, so torch's device run of the reference is left
out and said so), the reports, and opverify-reduce --baseline; opverify verify
for the degenerate-reference flag. Fixtures: tests/fixtures/cpu_ops."""
import json
import os
import subprocess
import xml.etree.ElementTree as ET

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CPU_OPS = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")
ADVERSARIAL = os.path.join(ROOT, "jobs", "adversarial")
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
SUSPECTS = ["bf16_prod", "isclose_f16"]


def program(name):
    path = os.path.join(BUILD, "reduce" if name == "opverify-reduce" else "runner", name)
    assert os.access(path, os.X_OK), path
    return path


def cuda_available():
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def batch(folder, name, operators, backend="cpu"):
    """operators: (name, fields) pairs; returns (run folder, process)."""
    manifest = folder / f"{name}.json"
    manifest.write_text(json.dumps({"name": name, "defaults": {"impl_name": "cpu_impl", "lint": False},
                                    "operators": [{"name": op, "dir": CPU_OPS, **fields} for op, fields in operators]}))
    run_dir = folder / name
    proc = subprocess.run([program("opverify-batch"), str(manifest), "--backend", backend, "--run-dir", str(run_dir),
                           "--no-bench"], capture_output=True, text=True, timeout=900)
    return run_dir, proc


def reduce(run_dir, baseline):
    proc = subprocess.run([program("opverify-reduce"), str(run_dir), "--baseline", str(baseline)],
                          capture_output=True, text=True, timeout=300)
    diff = json.loads((run_dir / "baseline_diff.json").read_text()) if (run_dir / "baseline_diff.json").exists() else None
    return proc, diff


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("trust")
    # Last night: the same operators judged against a float64 golden, and only the aligned size.
    old, proc = batch(folder, "old", [(op, {"golden_precision": "fp64"}) for op in SUSPECTS] +
                      [("tail_bug", {"dir": ADVERSARIAL, "sweep": {"n": [1024]}})])
    assert proc.returncode == 0, proc.stderr[-3000:]
    # Tonight: the CPU golden in the storage dtype; the same aligned size.
    suspect_only, proc = batch(folder, "suspect_only", [(op, {}) for op in SUSPECTS] +
                               [("tail_bug", {"dir": ADVERSARIAL, "sweep": {"n": [1024]}})])
    assert proc.returncode == 1, proc.stderr[-3000:]  # the verdict stays failed
    # And with a new, ragged size: a real defect beside the suspects.
    with_defect, proc = batch(folder, "with_defect", [(op, {}) for op in SUSPECTS] +
                              [("tail_bug", {"dir": ADVERSARIAL, "sweep": {"n": [1024, 1023]}})])
    assert proc.returncode == 1, proc.stderr[-3000:]
    return {"old": old, "suspect_only": suspect_only, "with_defect": with_defect}


def test_a_reference_that_rounds_every_step_is_the_suspect(runs):
    summary = json.loads((runs["with_defect"] / "summary.json").read_text())
    classes = {f["case_id"]: (f["error_type"], f.get("ab")) for f in summary["failures"]}
    assert classes == {"bf16_prod/#1": ("AccuracyError", "reference_suspect"),
                       "isclose_f16/#1": ("AccuracyError", "reference_suspect"),
                       'tail_bug/{"n":1023}': ("AccuracyError", "real_defect")}
    assert summary["ab"] == {"reference_suspect": 2, "real_defect": 1}
    assert summary["totals"]["failed"] == 3
    rows = {op["name"]: op for op in summary["operators"]}
    assert rows["bf16_prod"]["failed"] == 1 and rows["bf16_prod"]["reference_suspect"] == 1
    assert rows["tail_bug"]["reference_suspect"] == 0
    # Their own list, with both judgements.
    suspects = {s["case_id"]: s for s in summary["reference_suspect"]}
    assert sorted(suspects) == ["bf16_prod/#1", "isclose_f16/#1"]
    prod = suspects["bf16_prod/#1"]
    assert "passes against a float64 golden" in prod["reason"]
    assert prod["fp64"]["passed"] is True and prod["fp64"]["rerun_bitwise_equal"] is True
    assert prod["fp64"]["outputs"][0]["dtype"] == "bfloat16"
    assert prod["device_reference"]["ran"] is False and "cpu backend" in prod["device_reference"]["why"]


def test_verify_result_says_why_with_both_judgements(runs):
    seed = json.loads((runs["with_defect"] / "ops" / "bf16_prod" / "verify_result.json").read_text())
    assert seed["failed_cases"] == 1
    failure = seed["failures"][0]
    assert failure["error_type"] == "AccuracyError"
    ab = failure["ab"]
    assert ab["classification"] == "reference_suspect"
    assert ab["reference_trust"]["suspect"] is True
    assert ab["reference_trust"]["fp64"]["outputs"][0]["passed"] is True
    defect = json.loads((runs["with_defect"] / "ops" / "tail_bug" / "verify_result.json").read_text())
    trust = defect["failures"][0]["ab"]["reference_trust"]
    assert trust["suspect"] is False and trust["fp64"]["passed"] is False
    assert "fails the float64 golden too" in trust["reason"]


def test_the_reports_list_the_suspects_in_their_own_section(runs):
    md = (runs["with_defect"] / "report.md").read_text()
    section = md.split("## Reference suspects", 1)[1].split("\n## ", 1)[0]
    assert "bf16_prod/#1" in section and "isclose_f16/#1" in section and "tail_bug" not in section.split("```")[0]
    assert "| passed |" in section  # the float64 judgement
    html = (runs["with_defect"] / "report.html").read_text()
    assert 'id="reference-suspects"' in html and "bf16_prod/#1" in html.split('id="reference-suspects"')[1]
    cases = {c.get("name"): c for c in ET.parse(runs["with_defect"] / "junit.xml").getroot().iter("testcase")}
    prod = cases["bf16_prod/#1"]
    assert "[A/B: reference_suspect]" in prod.find("failure").get("message")
    assert "reference trust: the implementation's failing output passes" in prod.find("system-out").text


def test_a_newly_failing_reference_suspect_is_no_regression(runs):
    proc, diff = reduce(runs["suspect_only"], runs["old"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert diff["regressed"] is False and diff["newly_failing"] == []
    assert diff["reference_suspect"] == SUSPECTS
    assert "reference_suspect (failing, not counted as a regression): bf16_prod isclose_f16" in proc.stdout


def test_a_real_defect_beside_them_is_still_a_regression(runs):
    proc, diff = reduce(runs["with_defect"], runs["old"])
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert diff["newly_failing"] == ["tail_bug"] and diff["reference_suspect"] == SUSPECTS
    # Against a baseline where the suspects failed so already, only the defect is news.
    proc, diff = reduce(runs["with_defect"], runs["suspect_only"])
    assert proc.returncode == 1 and diff["newly_failing"] == ["tail_bug"] and diff["reference_suspect"] == []


def verify(tmp_path, op, *flags):
    output = tmp_path / f"{op}.json"
    proc = subprocess.run([program("opverify"), "verify", "--op_name", op, "--verify_dir", CPU_OPS,
                           "--triton_impl_name", "cpu_impl", "--backend", "cpu", "--no-lint", "--output", str(output),
                           *flags], capture_output=True, text=True, timeout=300)
    return proc, json.loads(output.read_text())


def test_golden_precision_fp64_is_honoured_by_verify(tmp_path):
    proc, native = verify(tmp_path, "bf16_prod")
    assert proc.returncode == 1 and native["opverify"]["cases"][0]["golden_precision"] == "native"
    proc, fp64 = verify(tmp_path, "bf16_prod", "--golden-precision", "fp64")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert fp64["opverify"]["cases"][0]["golden_precision"] == "fp64"


def test_a_sparse_output_that_moves_with_its_inputs_is_not_degenerate(tmp_path):
    proc, r = verify(tmp_path, "sparse_ok")
    assert proc.returncode == 0, proc.stderr[-2000:]
    case = r["opverify"]["cases"][0]
    assert case["seeds"] == [1, 2, 0]
    assert not any("degenerate" in w for w in case["warnings"]), case["warnings"]


def test_an_input_blind_reference_is_still_flagged(tmp_path):
    output = tmp_path / "blind.json"
    proc = subprocess.run([program("opverify"), "verify", "--op_name", "input_blind", "--verify_dir",
                           ADVERSARIAL, "--triton_impl_name", "cpu_impl",
                           "--backend", "cpu", "--no-lint", "--output", str(output)],
                          capture_output=True, text=True, timeout=300)
    warnings = json.loads(output.read_text())["opverify"]["cases"][0]["warnings"]
    assert any("bit for bit the same" in w and "does not depend on them" in w for w in warnings), (warnings, proc.stderr)


@pytest.mark.skipif(not cuda_available(), reason="no CUDA device: runs on the H200")
def test_on_cuda_torchs_own_device_run_of_the_reference_is_judged_too(tmp_path):
    """On cuda the implementations are Triton kernels that accumulate and compare in float32 and
    float64 (*_triton_impl.py beside the tasks), so the runtime evidence passes them and the
    reference trust check is what decides: the CPU golden's per-step rounding is the suspect."""
    run_dir, proc = batch(tmp_path, "cuda", [(op, {"impl_name": "triton_impl"}) for op in SUSPECTS], backend="cuda")
    assert proc.returncode == 1, proc.stderr[-3000:]
    summary = json.loads((run_dir / "summary.json").read_text())
    suspects = {s["case_id"]: s for s in summary["reference_suspect"]}
    assert sorted(suspects) == ["bf16_prod/#1", "isclose_f16/#1"], summary["failures"]
    for suspect in suspects.values():
        device = suspect["device_reference"]
        # torch's own kernel ran on the GPU (the implementation file not imported) and was judged.
        assert device["ran"] is True and device["judged"] is True, device
        assert device["golden_device"] == "cpu" and device["outputs"], device
        assert isinstance(device["implementation_matches"]["passed"], bool)
        assert suspect["fp64"]["passed"] is True
