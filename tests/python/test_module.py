"""The `opverify` Python module: numpy arrays and CPU torch tensors, judged in
place, agreeing with the CLI's JSON and with an independent numpy judge."""
import json
import math
import resource
import subprocess

import numpy as np
import pytest

import numpy_judge
import opverify

torch = pytest.importorskip("torch")


def test_same_fields_as_the_cli_json(tmp_path, opverify_bin):
    g = np.linspace(-3, 3, 1000, dtype=np.float32)
    a = g.copy()
    a[::50] += np.float32(0.01)
    np.save(tmp_path / "g.npy", g)
    np.save(tmp_path / "a.npy", a)
    cli = json.loads(subprocess.run([opverify_bin, "compare", "--golden", str(tmp_path / "g.npy"), "--actual",
                                     str(tmp_path / "a.npy"), "--json"], capture_output=True, text=True).stdout)
    mod = opverify.compare(g, a)
    assert mod == cli


def test_worked_vector_through_numpy():
    g = np.ones(1000, np.float32)
    a = g.copy()
    a[:11] += np.float32(2e-3)
    r = opverify.compare(g, a)
    assert r["passed"] is False and r["error_type"] == "AccuracyError"
    assert r["metrics"]["eco"]["over_count"] == 0
    a[:11] = 1
    a[:9] += np.float32(2e-3)
    assert opverify.compare(g, a)["passed"] is True


def test_keyword_options():
    g = np.array([5, 7], np.int32)
    a = np.array([6, 7], np.int32)
    assert opverify.compare(g, a)["route"] == "exact"
    assert opverify.compare(g, a, input_type="float")["passed"] is True
    z = np.array([0.0], np.float32)
    assert opverify.compare(z, -z, non_compute=True)["passed"] is False
    assert opverify.compare(z, z, standard="strict")["route"] == "strict"
    assert opverify.compare(z, z, precision_mode="hf32")["precision_mode"] == "hf32"
    with pytest.raises(ValueError, match="standard"):
        opverify.compare(z, z, standard="bogus")
    with pytest.raises(TypeError):
        opverify.compare(z, z, "eco")  # options are keyword-only


def test_non_finite_values_come_back_as_floats():
    r = opverify.compare(np.array([np.nan, 1], np.float32), np.array([0, 1], np.float32))
    assert r["error_type"] == "NaNMismatch"
    assert math.isnan(r["worst"][0]["golden"])


def test_torch_tensors_including_bfloat16_and_strides():
    g = torch.randn(64, 48, dtype=torch.float32)
    assert opverify.compare(g, g.clone())["passed"] is True
    # a transposed (non-contiguous) actual holding the same logical values
    t = g.t().contiguous().t()
    assert not t.is_contiguous()
    assert opverify.compare(g, t)["passed"] is True
    b = g.to(torch.bfloat16)
    r = opverify.compare(b, b.clone())
    assert r["dtype"] == "bfloat16" and r["passed"] is True
    wrong = b.clone()
    wrong[3, 4] += 4  # beyond bfloat16 max_abs_error_limit (1.0): over_count 1
    r = opverify.compare(b, wrong)
    assert r["passed"] is False and r["worst"][0]["index"] == 3 * 48 + 4
    h = g.half()
    assert opverify.compare(h, h.float())["warnings"] == ["dtype_mismatch"]
    c = torch.randn(10, dtype=torch.complex64)
    assert opverify.compare(c, c.clone())["dtype"] == "complex64"
    assert opverify.compare(torch.tensor([True, False]), torch.tensor([True, True]))["passed"] is False


def test_float8_torch_tensors_where_torch_has_them():
    if not hasattr(torch, "float8_e4m3fn"):
        pytest.skip(f"torch {torch.__version__} has no float8 dtypes")
    x = torch.randn(100).to(torch.float8_e4m3fn)
    assert opverify.compare(x, x.clone())["dtype"] == "float8_e4m3fn"


def test_raw_storage_with_dtype_keyword():
    bits = np.array([0x3F80, 0x4000], np.uint16)
    r = opverify.compare(bits, bits, dtype="bfloat16")
    assert r["dtype"] == "bfloat16"
    with pytest.raises(TypeError, match="bfloat16"):
        opverify.compare(np.ones(2, np.float32), np.ones(2, np.float32), dtype="bfloat16")


def test_device_tensors_are_refused_clearly():
    meta = torch.empty(3, device="meta")
    with pytest.raises(ValueError, match="meta"):
        opverify.compare(meta, meta)


def test_large_inputs_are_not_copied():
    n = 50_000_000  # 200 MB per float32 tensor
    g = np.ones(n, np.float32)
    a = np.ones(n, np.float32)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB
    assert opverify.compare(g, a)["passed"] is True
    tg = torch.from_numpy(g)
    assert opverify.compare(tg, torch.from_numpy(a))["passed"] is True
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 50, f"peak memory grew by {grown_mib:.0f} MiB judging 2 x 200 MB"


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_agrees_with_independent_numpy_judge(dtype):
    rng = np.random.default_rng(7)
    for trial in range(60):
        n = int(rng.integers(1, 3000))
        g = (rng.standard_normal(n) * 10.0 ** rng.integers(-5, 3)).astype(dtype)
        scale = 10.0 ** rng.uniform(-6, -1)
        a = (g.astype(np.float64) * (1 + rng.standard_normal(n) * scale)).astype(dtype)
        if trial % 5 == 0:
            a[rng.integers(0, n)] = g[0] + 0.5
        ours = opverify.compare(g, a)
        error_type, ref = numpy_judge.judge(g.astype(np.float64), a.astype(np.float64), dtype)
        assert ours["error_type"] == error_type, (trial, ours["error_msg"])
        m = ours["metrics"]
        if "eco" in ref:
            assert m["eco"]["over_count"] == ref["eco"]["over_count"]
            assert m["eco"]["matched_ratio"] == ref["eco"]["matched_ratio"]
        assert m["npu_benchmark"]["max_error_cap_violation_count"] == ref["npu_benchmark"]["max_error_cap_violation_count"]
        assert m["npu_benchmark"]["matched_ratio"] == ref["npu_benchmark"]["matched_ratio"]
        assert m["npu_benchmark"]["MERE"] == pytest.approx(ref["npu_benchmark"]["MERE"], rel=1e-12)
        assert m["mere_mare"]["MARE"] == ref["mere_mare"]["MARE"]
        assert m["mere_mare"]["MERE"] == pytest.approx(ref["mere_mare"]["MERE"], rel=1e-12)
        assert m["max_abs_diff"] == ref["max_abs_diff"]
