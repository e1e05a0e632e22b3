"""PRECISION.md's float rules in numpy, written the way the seed scripts write
theirs: whole-array operations, each making a full-size temporary.

It is the baseline of perf/judge_throughput.py, and a second, independent
implementation that tests/python/test_module.py checks opverify against.
"""
import numpy as np


def p2(e):
    return float(2.0 ** e)


ECO = {  # dtype: (rtol, atol, max_abs_error_limit, mantissa bits, min normal exponent)
    "float16": (p2(-9), p2(-9), 1e-1, 10, -14),
    "bfloat16": (p2(-6), p2(-6), 1.0, 7, -126),
    "float32": (p2(-10), p2(-16), 1e-2, 23, -126),
    "hifloat32": (p2(-9), p2(-10), 1e-1, 23, -126),
    "float8_e4m3fn": (p2(-2), p2(-4), 1.0, 3, -6),
    "float8_e5m2": (p2(-1), p2(-3), 1e-1, 2, -14),
}
NPU = {  # dtype: (small_value_threshold, small_value_error, rel_threshold, cap_atol, cap_rtol)
    "float16": (p2(-11), p2(-16), p2(-10), 9e-2, p2(-10)),
    "bfloat16": (p2(-8), p2(-16), p2(-7), 1e-1, p2(-7)),
    "float32": (p2(-14), p2(-30), p2(-13), 1e-3, p2(-13)),
    "hifloat32": (p2(-12), p2(-28), p2(-11), 1e-3, p2(-13)),
    "float8_e4m3fn": (p2(-4), p2(-6), p2(-3), 1e-3, p2(-13)),
    "float8_e5m2": (p2(-3), p2(-5), p2(-2), 1e-3, p2(-13)),
    "other": (p2(-14), p2(-30), p2(-13), 1e-3, p2(-13)),
}
MERE_MARE_T = {"float16": p2(-10), "float32": p2(-13), "bfloat16": p2(-7), "hifloat32": p2(-11),
               "float8_e4m3fn": p2(-3), "float8_e5m2": p2(-2), "other": p2(-13)}


def ulp(x, mantissa_bits, min_exp):
    """ULP(|x|) per PRECISION.md, element-wise."""
    x = np.abs(x)
    _, e = np.frexp(x)
    normal = np.ldexp(1.0, (e - 1 - mantissa_bits).astype(np.int32))
    return np.where(x < 2.0 ** min_exp, 2.0 ** (min_exp - mantissa_bits), normal)


def judge(golden, actual, dtype_name):
    """golden, actual: float64 arrays holding the values of dtype `dtype_name`.
    Returns (error_type or None, metrics dict) for the eco routing."""
    golden = np.asarray(golden, dtype=np.float64)
    actual = np.asarray(actual, dtype=np.float64)
    if golden.shape != actual.shape:
        return "ShapeMismatch", {}
    g_nan, a_nan = np.isnan(golden), np.isnan(actual)
    if not np.array_equal(g_nan, a_nan):
        return "NaNMismatch", {}
    g_inf, a_inf = np.isinf(golden), np.isinf(actual)
    if not np.array_equal(g_inf, a_inf) or not np.array_equal(np.sign(golden[g_inf]), np.sign(actual[a_inf])):
        return "InfMismatch", {}
    finite = np.isfinite(golden) & np.isfinite(actual)
    g = golden[finite]
    a = actual[finite]
    n = g.size
    d = np.abs(a - g)
    ag = np.abs(g)
    metrics = {"total": int(golden.size), "total_finite": int(n),
               "max_abs_diff": float(d.max()) if n else 0.0}
    key = dtype_name if dtype_name in NPU else "other"
    if dtype_name in ECO:
        rtol, atol, limit, p, emin = ECO[dtype_name]
        tol = atol + rtol * ag
        matched = int(np.count_nonzero(d <= tol))
        bound = np.maximum(np.maximum(limit, 32 * ulp(g, p, emin)), tol)
        over = int(np.count_nonzero(d > bound))
        ratio = matched / n if n else 1.0
        metrics["eco"] = {"matched_ratio": ratio, "over_count": over,
                          "passed": (ratio >= 0.99 if n else True) and over == 0}
    svt, sve, rel_thr, cap_atol, cap_rtol = NPU[key]
    rel = d / (ag + 1e-7)
    small = ag < svt
    matched = np.where(small, d <= sve, rel <= rel_thr)
    cap_violations = int(np.count_nonzero(d > cap_atol + cap_rtol * ag))
    npu_ratio = float(np.count_nonzero(matched)) / n if n else 1.0
    npu_mere = float(rel.mean()) if n else 0.0
    metrics["npu_benchmark"] = {
        "matched_ratio": npu_ratio, "MERE": npu_mere, "max_error_cap_violation_count": cap_violations,
        "small_count": int(np.count_nonzero(small)),
        "passed": cap_violations == 0 and npu_ratio >= 0.9 and (npu_mere < rel_thr if n else True)}
    t = MERE_MARE_T[key]
    rel_mm = d / np.maximum(ag, t)
    mere = float(rel_mm.mean()) if n else 0.0
    mare = float(rel_mm.max()) if n else 0.0
    metrics["mere_mare"] = {"MERE": mere, "MARE": mare, "passed": mere < t and mare < 10 * t}
    decided = metrics["eco"] if "eco" in metrics else metrics["npu_benchmark"]
    return (None if decided["passed"] else "AccuracyError"), metrics
