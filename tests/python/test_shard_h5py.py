"""The HDF5 store as users read it: shards and results.h5 written by the real C++ writer
(tests/unit/shard_writer_child.cc, sample cases of tests/unit/shard_sample_case.h), opened with
h5py, numpy and h5dump exactly as schemas/hdf5-layout.md describes them."""
import json
import math
import os
import shutil
import subprocess

import h5py
import numpy as np
import pytest

BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
CHILD = os.path.join(BUILD, "tests", "shard_writer_child")

CASE_ATTRIBUTES = {"case_id", "op_name", "params", "input_desc", "verdict", "route", "error_type", "error_msg",
                   "outputs", "timings", "device", "ab", "extra", "case_index", "rank"}
TABLE_COLUMNS = ["case_id", "op_name", "case_index", "kind", "passed", "route", "error_type", "max_abs_diff",
                 "max_rel_diff", "rank", "shard", "n", "group", "device", "tensors", "ab_classification", "wall_ms",
                 "compile_ms", "construct_ms", "golden_ms", "impl_ms", "judge_ms"]


def write_cases(run_dir, count, *flags):
    assert os.access(CHILD, os.X_OK), f"build shard_writer_child first: {CHILD} is missing"
    proc = subprocess.run([CHILD, str(run_dir), str(count), *flags], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return [line.split(" ", 1)[1] for line in proc.stdout.splitlines()]


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """Rank 0 keeps tensors of failures only (4 cases); rank 1 of all (8 cases), then indexes the run."""
    run = tmp_path_factory.mktemp("run")
    write_cases(run, 4, "--rank", "0", "--first", "100", "--policy", "failures")
    write_cases(run, 8, "--rank", "1", "--index")
    return run


def bf16_to_float(raw):
    return (raw.astype(np.uint32) << 16).view(np.float32)


def test_shard_root_says_what_it_is(run_dir):
    with h5py.File(run_dir / "shards" / "rank-0001.h5", "r") as f:
        assert f.attrs["format"] == "opverify-shard"
        assert f.attrs["format_version"] == 3
        assert f.attrs["rank"] == 1
        assert f.attrs["shard"] == 0
        assert f.attrs["policy"] == "all"
        assert f.attrs["created"].endswith("Z") and "T" in f.attrs["created"]
        assert sorted(f["cases"]) == [f"{n:06d}" for n in range(8)]


def test_case_attributes_are_strings_json_and_ints(run_dir):
    with h5py.File(run_dir / "shards" / "rank-0001.h5", "r") as f:
        case = f["cases/000003"]
        assert set(case.attrs) == CASE_ATTRIBUTES
        assert case.attrs["case_id"] == "op0/case-0003"
        assert case.attrs["op_name"] == "op0"
        assert case.attrs["case_index"] == 3 and case.attrs["rank"] == 1
        assert case.attrs["verdict"] == "failed"
        assert case.attrs["error_type"] == "AccuracyError"
        assert case.attrs["error_msg"].startswith("output 0: 1 of 32 elements over tolerance \u2014 \u00e9\n")
        assert len(case.attrs["error_msg"]) > 5000
        assert json.loads(case.attrs["params"]) == {"n": 3, "mode": "fast", "scale": 0.5}
        assert json.loads(case.attrs["input_desc"])[0]["dtype"] == "bfloat16"
        outputs = json.loads(case.attrs["outputs"])
        assert outputs[0]["metrics"]["max_abs_diff"] == 0.125 and outputs[0]["worst"][0]["index"] == 5
        assert json.loads(case.attrs["timings"])["impl_ms"] == 0.75
        assert json.loads(case.attrs["ab"])["classification"] == "real_defect"
        assert json.loads(f["cases/000000"].attrs["ab"]) is None
        assert f["cases/000000"].attrs["verdict"] == "passed" and f["cases/000000"].attrs["error_type"] == ""


def test_tensors_bfloat16_raw_with_a_dtype_attribute(run_dir):
    with h5py.File(run_dir / "shards" / "rank-0001.h5", "r") as f:
        golden, actual = f["cases/000003/outputs/0/golden"], f["cases/000003/outputs/0/actual"]
        assert golden.dtype == np.uint16 and golden.attrs["dtype"] == "bfloat16" and golden.shape == (4, 8)
        expected = np.arange(32, dtype=np.float32).reshape(4, 8) / 8
        np.testing.assert_array_equal(bf16_to_float(golden[()]), expected)
        expected.flat[5] += 0.125
        np.testing.assert_array_equal(bf16_to_float(actual[()]), expected)
        floats = f["cases/000003/outputs/1/actual"]
        assert floats.dtype == np.float32 and "dtype" not in floats.attrs
        np.testing.assert_array_equal(floats[()], np.arange(16, dtype=np.float32) + 0.5)


def test_policy_failures_keeps_tensors_of_failed_cases_only(run_dir):
    with h5py.File(run_dir / "shards" / "rank-0000.h5", "r") as f:
        assert f.attrs["policy"] == "failures"
        kept = {f[f"cases/{n}"].attrs["case_index"]: "outputs" in f[f"cases/{n}"] for n in f["cases"]}
        assert kept == {100: False, 101: False, 102: False, 103: True}


def test_shard_table_is_a_numpy_structured_array(run_dir):
    with h5py.File(run_dir / "shards" / "rank-0001.h5", "r") as f:
        table = f["table"][:]
        assert list(table.dtype.names) == TABLE_COLUMNS
        assert len(table) == 8
        assert [c.decode() for c in table["case_id"]] == [f"op{i % 3}/case-{i:04d}" for i in range(8)]
        np.testing.assert_array_equal(table["passed"], [1, 1, 1, 0, 1, 1, 1, 0])
        np.testing.assert_array_equal(table["case_index"], np.arange(8))
        assert {k.decode() for k in table["kind"]} == {"case"}
        np.testing.assert_array_equal(table["impl_ms"], 0.25 * np.arange(8))
        assert np.isnan(table["construct_ms"]).all() and np.isnan(table["max_rel_diff"]).all()
        assert table["max_abs_diff"][3] == 0.125
        assert [o.decode() for o in table["ab_classification"]] == ["", "", "", "real_defect"] * 2
        np.testing.assert_array_equal(table["wall_ms"], 5.0)
        assert table["tensors"].all()
        for row in table:  # each row names its case group
            assert f[row["group"].decode()].attrs["case_index"] == row["case_index"]


def test_results_links_every_shard_and_tables_every_case(run_dir):
    with h5py.File(run_dir / "results.h5", "r") as f:
        assert f.attrs["format"] == "opverify-results"
        assert (f.attrs["cases"], f.attrs["passed"], f.attrs["failed"]) == (12, 9, 3)
        assert f.attrs["records"] == 12 and f.attrs["format_version"] == 3
        assert f.attrs["waived"] == 0
        assert json.loads(f.attrs["problems"]) == []
        assert sorted(f["shards"]) == ["rank-0000", "rank-0001"]
        assert isinstance(f["shards"].get("rank-0001", getlink=True), h5py.ExternalLink)
        assert f["shards/rank-0001"].attrs["rank"] == 1
        table = f["cases"][:]
        assert list(table.dtype.names) == TABLE_COLUMNS
        assert [(r, c.decode()) for r, c in zip(table["rank"], table["case_id"])][:5] == [
            (0, "op1/case-0100"), (0, "op2/case-0101"), (0, "op0/case-0102"), (0, "op1/case-0103"),
            (1, "op0/case-0000")]
        for row in table:  # group paths go through the external links
            group = f[row["group"].decode()]
            assert group.attrs["case_id"] == row["case_id"].decode()
            assert ("outputs" in group) == bool(row["tensors"])


def test_results_table_as_pandas(run_dir):
    pd = pytest.importorskip("pandas")
    with h5py.File(run_dir / "results.h5", "r") as f:
        frame = pd.DataFrame(f["cases"][:])
    assert len(frame) == 12 and frame["passed"].sum() == 9


def test_journal_lines_are_json(run_dir):
    lines = (run_dir / "shards" / "rank-0001.journal").read_text().splitlines()
    entries = [json.loads(line) for line in lines]
    assert [e["n"] for e in entries] == list(range(8))
    assert {e["shard"] for e in entries} == {"rank-0001.h5"}
    assert all(e["address"] > 0 for e in entries)


def test_a_second_session_writes_a_new_shard(tmp_path):
    write_cases(tmp_path, 2)
    write_cases(tmp_path, 2, "--first", "10", "--index")
    assert sorted(os.listdir(tmp_path / "shards")) == ["rank-0000.1.h5", "rank-0000.h5", "rank-0000.journal"]
    with h5py.File(tmp_path / "results.h5", "r") as f:
        assert sorted(f["shards"]) == ["rank-0000", "rank-0000.1"]
        assert [g.decode() for g in f["cases"]["group"]] == [
            "/shards/rank-0000/cases/000000", "/shards/rank-0000/cases/000001",
            "/shards/rank-0000.1/cases/000000", "/shards/rank-0000.1/cases/000001"]


@pytest.mark.parametrize("name", ["shards/rank-0001.h5", "results.h5"])
def test_h5dump_reads_the_files(run_dir, name):
    if shutil.which("h5dump") is None:
        pytest.skip("h5dump is not installed (Debian: hdf5-tools)")
    proc = subprocess.run(["h5dump", "-H", name], cwd=run_dir, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert 'DATASET "' in proc.stdout
    assert "H5T_COMPOUND" in proc.stdout
    if name == "results.h5":
        assert 'EXTERNAL_LINK "rank-0000"' in proc.stdout


def test_results_h5_opens_from_any_directory(run_dir, tmp_path):
    # External links are relative to results.h5's own folder, not the reader's.
    with h5py.File(run_dir / "results.h5", "r") as f:
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:
            assert not math.isnan(f["shards/rank-0000/table"][0]["compile_ms"])
        finally:
            os.chdir(cwd)
