"""`opverify compare` on files written by real numpy and h5py."""
import h5py
import numpy as np
import pytest


def save(path, array, version=None):
    with open(path, "wb") as f:
        np.lib.format.write_array(f, array, version=version, allow_pickle=False)
    return path


def test_pass_and_fail_exit_codes_and_json(tmp_path, compare):
    g = save(tmp_path / "g.npy", np.ones(1000, np.float32))
    a_ok = save(tmp_path / "a_ok.npy", np.ones(1000, np.float32))
    bad = np.ones(1000, np.float32)
    bad[:11] += np.float32(2e-3)
    a_bad = save(tmp_path / "a_bad.npy", bad)

    ok = compare(g, a_ok, "--json")
    assert ok.returncode == 0, ok.stderr
    j = ok.json()
    assert j["passed"] is True and j["route"] == "eco" and j["error_type"] is None
    assert j["warnings"] == []
    assert set(j["metrics"]) >= {"total", "total_finite", "nan_count", "inf_count", "max_abs_diff",
                                 "max_rel_diff", "eco", "npu_benchmark", "mere_mare"}
    assert set(j["metrics"]["npu_benchmark"]["checks"]) == {"max_error_cap", "required_matched_ratio", "MERE"}

    fail = compare(g, a_bad, "--json")
    assert fail.returncode == 1
    j = fail.json()
    assert j["passed"] is False and j["error_type"] == "AccuracyError"
    assert j["metrics"]["eco"]["matched_ratio"] == pytest.approx(0.989)
    assert j["metrics"]["eco"]["over_count"] == 0
    assert len(j["worst"]) == 8 and j["worst"][0]["index"] == 0


def test_human_summary(tmp_path, compare):
    g = save(tmp_path / "g.npy", np.ones(10, np.float16))
    a = np.ones(10, np.float16)
    a[4] = 2
    out = compare(g, save(tmp_path / "a.npy", a))
    assert out.returncode == 1
    assert out.stdout.startswith("FAIL")
    assert "[4]" in out.stdout and "AccuracyError" in out.stdout


@pytest.mark.parametrize("version", [(1, 0), (2, 0), (3, 0)])
def test_every_format_version(tmp_path, compare, version):
    x = np.arange(12, dtype=np.float64).reshape(3, 4)
    r = compare(save(tmp_path / "g.npy", x, version), save(tmp_path / "a.npy", x, version), "--json")
    assert r.returncode == 0, r.stderr
    assert r.json()["shape"] == [3, 4]


def test_fortran_order_and_byte_order_read_as_values(tmp_path, compare):
    x = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    g = save(tmp_path / "g.npy", x)
    assert compare(g, save(tmp_path / "f.npy", np.asfortranarray(x)), "--json").returncode == 0
    assert compare(g, save(tmp_path / "be.npy", x.astype(">f4")), "--json").returncode == 0
    # Same bytes read as C order would be a different tensor.
    wrong = np.ascontiguousarray(np.asfortranarray(x).ravel(order="K").reshape(5, 7))
    assert compare(g, save(tmp_path / "w.npy", wrong), "--json").returncode == 1


@pytest.mark.parametrize("dtype", ["i1", "i2", "i4", "i8", "u1", "u2", "u4", "u8", "f2", "f4", "f8",
                                   "c8", "c16", "?", ">i4", ">f8", ">c8"])
def test_every_numpy_dtype(tmp_path, compare, dtype):
    x = (np.arange(24) % 2 == 0) if dtype == "?" else (np.arange(24) % 7).astype(dtype)
    y = x.copy()
    assert compare(save(tmp_path / "g.npy", x), save(tmp_path / "a.npy", y), "--json").returncode == 0
    y = np.logical_not(x) if dtype == "?" else (x + 3).astype(dtype)
    r = compare(save(tmp_path / "g.npy", x), save(tmp_path / "a.npy", y), "--json")
    assert r.returncode == 1, r.stdout


def test_bfloat16_and_float8_as_raw_storage(tmp_path, compare):
    bits = np.array([0x3F80, 0x4000, 0x4040], np.uint16)  # 1, 2, 3 in bfloat16
    off = bits.copy()
    off[2] += 16  # 3 -> 3.25: beyond bfloat16 eco tolerance (2^-6 + 2^-6 * 3)
    g = save(tmp_path / "g.npy", bits)
    r = compare(g, save(tmp_path / "a.npy", off), "--dtype", "bfloat16", "--json")
    assert r.returncode == 1
    j = r.json()
    assert j["dtype"] == "bfloat16" and j["worst"][0]["golden"] == 3.0 and j["worst"][0]["actual"] == 3.25
    # numpy void storage works the same.
    assert compare(save(tmp_path / "v.npy", bits.view("V2")), g, "--dtype", "bfloat16").returncode == 0
    e4m3 = np.array([0x38, 0x40, 0x7E], np.uint8)  # 1, 2, 448
    r = compare(save(tmp_path / "e.npy", e4m3), save(tmp_path / "e2.npy", e4m3), "--dtype", "float8_e4m3fn", "--json")
    assert r.returncode == 0 and r.json()["dtype"] == "float8_e4m3fn"


def test_zero_dimensional_and_empty(tmp_path, compare):
    s = save(tmp_path / "s.npy", np.array(3.0, np.float32))
    assert compare(s, s, "--json").json()["shape"] == []
    e = save(tmp_path / "e.npy", np.zeros((0, 4), np.float16))
    r = compare(e, e, "--json")
    assert r.returncode == 0 and r.json()["metrics"]["total"] == 0


def test_shape_mismatch_is_a_verdict_not_an_input_error(tmp_path, compare):
    r = compare(save(tmp_path / "g.npy", np.ones((2, 3))), save(tmp_path / "a.npy", np.ones((3, 2))), "--json")
    assert r.returncode == 1
    assert r.json()["error_type"] == "ShapeMismatch"


def test_options_reach_the_judge(tmp_path, compare):
    g = save(tmp_path / "g.npy", np.array([5, 7], np.int32))
    a = save(tmp_path / "a.npy", np.array([6, 7], np.int32))
    assert compare(g, a, "--json").json()["route"] == "exact"
    quant = compare(g, a, "--input-type", "float", "--json")
    assert quant.returncode == 0 and quant.json()["route"] == "quant"
    f = save(tmp_path / "f.npy", np.array([0.0], np.float32))
    nz = save(tmp_path / "nz.npy", np.array([-0.0], np.float32))
    assert compare(f, nz).returncode == 0
    assert compare(f, nz, "--non-compute", "--json").json()["route"] == "bitwise"
    assert compare(f, nz, "--non-compute").returncode == 1
    for standard in ["eco", "npu_benchmark", "mere_mare", "strict"]:
        assert compare(f, f, "--standard", standard, "--json").json()["standard"] == standard
    assert compare(f, f, "--precision-mode", "tf32", "--json").json()["precision_mode"] == "tf32"


def test_hdf5_datasets(tmp_path, compare):
    path = tmp_path / "t.h5"
    with h5py.File(path, "w") as f:
        f["g/x"] = np.linspace(0, 1, 50, dtype=np.float32)
        f["a/x"] = np.linspace(0, 1, 50, dtype=np.float32)
        f["a/off"] = np.linspace(0, 1, 50, dtype=np.float32) + np.float32(0.5)
        f["bf/g"] = np.array([0x3F80, 0x4000], np.uint16)
        f["bf/g"].attrs["dtype"] = "bfloat16"
        f["bf/a"] = np.array([0x3F80, 0x4001], np.uint16)
        f["bf/a"].attrs["dtype"] = "bfloat16"
        f["c"] = np.array([1 + 2j, 3 - 1j], np.complex64)
        f["b"] = np.array([True, False])
    assert compare(f"{path}:/g/x", f"{path}:/a/x").returncode == 0
    assert compare(f"{path}:/g/x", f"{path}:/a/off").returncode == 1
    r = compare(f"{path}:/bf/g", f"{path}:/bf/a", "--json")
    assert r.json()["dtype"] == "bfloat16"
    assert compare(f"{path}:/c", f"{path}:/c", "--json").json()["dtype"] == "complex64"
    assert compare(f"{path}:/b", f"{path}:/b", "--json").json()["dtype"] == "bool"
    # npy against HDF5
    assert compare(save(tmp_path / "x.npy", np.linspace(0, 1, 50, dtype=np.float32)), f"{path}:/g/x").returncode == 0


def test_unreadable_inputs_exit_2_naming_file_and_problem(tmp_path, compare):
    good = save(tmp_path / "good.npy", np.ones(4, np.float32))
    cases = {}
    cases["missing"] = (tmp_path / "missing.npy", None)
    trunc = tmp_path / "trunc.npy"
    trunc.write_bytes(good.read_bytes()[:-3])
    cases["truncated"] = (trunc, "trunc")
    bad = tmp_path / "badheader.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f4',\n")
    cases["header"] = (bad, "header")
    notnpy = tmp_path / "plain.npy"
    notnpy.write_text("hello world, this is not numpy")
    cases["magic"] = (notnpy, None)
    obj = tmp_path / "obj.npy"
    np.save(obj, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    cases["dtype"] = (obj, "dtype")
    extra = tmp_path / "extra.npy"
    extra.write_bytes(good.read_bytes() + b"\0\0\0\0")
    cases["size"] = (extra, None)
    for name, (path, word) in cases.items():
        r = compare(good, path)
        assert r.returncode == 2, name
        assert path.name in r.stderr, (name, r.stderr)
        if word:
            assert word in r.stderr.lower(), (name, r.stderr)
    h5 = tmp_path / "t.h5"
    with h5py.File(h5, "w") as f:
        f["x"] = np.ones(4, np.float32)
    r = compare(good, f"{h5}:/nope")
    assert r.returncode == 2 and "nope" in r.stderr and "t.h5" in r.stderr
    r = compare(good, good, "--dtype", "notatype")
    assert r.returncode == 2 and "notatype" in r.stderr
    r = compare(good, save(tmp_path / "f32.npy", np.ones(4, np.float32)), "--dtype", "bfloat16")
    assert r.returncode == 2 and "bfloat16" in r.stderr


def test_usage_errors_exit_2(opverify_bin):
    import subprocess
    assert subprocess.run([opverify_bin, "compare"], capture_output=True).returncode == 2
    assert subprocess.run([opverify_bin, "compare", "--golden", "x", "--actual", "y", "--standard", "nope"],
                          capture_output=True).returncode == 2
    assert subprocess.run([opverify_bin], capture_output=True).returncode == 2
    assert subprocess.run([opverify_bin, "--help"], capture_output=True).returncode == 0
