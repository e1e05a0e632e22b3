"""Quick standalone check of opverify_testlib against torch on a CUDA device, for the
library's own development (not opverify's judgement: that is jobs/library.json).

    python3 jobs/library/selfcheck.py        # prints one line per check, exits 1 on a failure

Each operator is compared with torch run in float64 on the same inputs, with a tolerance per
dtype; the ATen overrides are checked to be reached (the library's kernel in the profile)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

import opverify_testlib as lib  # noqa: E402
from opverify_testlib import aten  # noqa: E402

TOL = {torch.float16: 2e-3, torch.bfloat16: 1.6e-2, torch.float32: 2e-5}
DTYPES = (torch.float16, torch.bfloat16, torch.float32)
failures = []


def check(name, got, want, dtype, scale=1.0):
    want = want.to(got.dtype) if got.dtype == torch.bool else want
    if got.shape != want.shape:
        ok, detail = False, f"shape {list(got.shape)} != {list(want.shape)}"
    elif got.dtype == torch.bool:
        bad = int((got != want).sum())
        ok, detail = bad == 0, f"{bad} differing"
    else:
        err = (got.double() - want.double()).abs()
        bound = TOL[dtype] * scale * (1 + want.double().abs())
        bad = int((err > bound).sum())
        ok, detail = bad == 0, f"max err {float(err.max()) if err.numel() else 0:.3g}, {bad} over"
    print(("ok   " if ok else "FAIL ") + f"{name} [{str(dtype)[6:]}] {detail}", flush=True)
    if not ok:
        failures.append(name)


def rnd(*shape, dtype):
    return torch.randn(*shape, device="cuda").to(dtype)


def kernels_in(fn):
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    return sorted({e.name for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA})


def main():
    torch.manual_seed(0)
    for dt in DTYPES:
        for rows, cols in ((1, 1), (33, 1000), (16, 4097), (4, 10000)):
            x = rnd(rows, cols, dtype=dt) * 2
            xd = x.double()
            check(f"softmax {rows}x{cols}", lib.softmax(x), torch.softmax(xd, -1), dt)
            check(f"softmax dim0 {rows}x{cols}", lib.softmax(x, 0), torch.softmax(xd, 0), dt)
            check(f"sum_dim {rows}x{cols}", lib.sum_dim(x, 1), xd.sum(1), dt, 1 + cols ** 0.5)
            check(f"mean_dim0 keep {rows}x{cols}", lib.mean_dim(x, 0, True), xd.mean(0, True), dt, 4)
            check(f"cumsum {rows}x{cols}", lib.cumsum(x, -1), xd.cumsum(-1), dt, 1 + cols ** 0.5)
            p = (1 + 0.1 * (2 * torch.rand(rows, cols, device="cuda") - 1)).to(dt)
            check(f"prod_dim {rows}x{cols}", lib.prod_dim(p, 1), p.double().prod(1), dt, 8)
            w = rnd(cols, dtype=dt)
            b = rnd(cols, dtype=dt)
            check(f"layer_norm {rows}x{cols}", lib.layer_norm(x, [cols], w, b),
                  F.layer_norm(xd, [cols], w.double(), b.double()), dt, 4)
            check(f"rms_norm {rows}x{cols}", lib.rms_norm(x, w),
                  xd * torch.rsqrt(xd.pow(2).mean(-1, keepdim=True) + 1e-6) * w.double(), dt, 4)
            check(f"gelu {rows}x{cols}", lib.gelu(x), F.gelu(xd), dt)
            check(f"gelu tanh {rows}x{cols}", lib.gelu(x, "tanh"), F.gelu(xd, approximate="tanh"), dt)
            y = rnd(rows, cols, dtype=dt)
            check(f"silu_mul {rows}x{cols}", lib.silu_mul(x, y), F.silu(xd) * y.double(), dt)
            check(f"add row bcast {rows}x{cols}", lib.add(x, w), xd + w.double(), dt)
            col = rnd(rows, 1, dtype=dt)
            check(f"add col bcast alpha {rows}x{cols}", lib.add(x, col, 0.5), xd + 0.5 * col.double(), dt)
            near = x + (torch.rand_like(x.float()) < 0.5).to(dt) * (0.5 + x.abs())
            check(f"isclose {rows}x{cols}", lib.isclose(x, near, 1e-2, 1e-3), torch.isclose(x, near, 1e-2, 1e-3), dt)
        for m, n, k in ((64, 64, 64), (100, 257, 33), (1, 7, 1000)):
            a, b = rnd(m, k, dtype=dt), rnd(k, n, dtype=dt)
            check(f"matmul {m}x{n}x{k}", lib.matmul(a, b), a.double() @ b.double(), dt, 1 + k ** 0.5)
            check(f"matmul strided {m}x{n}x{k}", lib.matmul(a, b.t().contiguous().t()), a.double() @ b.double(), dt,
                  1 + k ** 0.5)
    a4, b4 = rnd(2, 1, 5, 7, dtype=torch.float32), rnd(3, 1, 7, dtype=torch.float16)
    check("add 4d bcast, promoted", lib.add(a4, b4), a4.double() + b4.double(), torch.float32)

    # The overrides: reached, right, and gone after the context.
    x = rnd(64, 1000, dtype=torch.float16)
    calls = {
        "_softmax": lambda: torch.softmax(x, -1),
        "gelu": lambda: F.gelu(x),
        "silu": lambda: F.silu(x),
        "native_layer_norm": lambda: F.layer_norm(x, [1000]),
        "sum.dim_IntList": lambda: torch.sum(x, dim=1),
        "mean.dim": lambda: torch.mean(x, dim=0),
        "prod.dim_int": lambda: torch.prod((x * 0.01 + 1), dim=1),
        "cumsum": lambda: torch.cumsum(x, 1),
        "mm": lambda: torch.mm(x, x.t()),
        "isclose": lambda: torch.isclose(x, x + 1e-3),
    }
    for name, call in calls.items():
        want = call()
        with aten.enabled():
            got = call()
            ks = kernels_in(call)
        ok_kernel = any(("_kernel" in k and "at::" not in k) for k in ks)
        print(("ok   " if ok_kernel else "FAIL ") + f"override {name} reached: {ks}", flush=True)
        if not ok_kernel:
            failures.append(f"override {name}")
        if got.dtype == torch.bool:
            check(f"override {name}", got, want, torch.float16)
        else:
            check(f"override {name}", got.float(), want.float(), torch.float16, 8 + 2 * x.shape[-1] ** 0.5)
        after = kernels_in(call)
        leaked = [k for k in after if "opverify" in k or k.startswith("_")]
        print(("ok   " if not leaked else "FAIL ") + f"override {name} removed after the context: {after}")
    aten.enable()
    ks = kernels_in(calls["_softmax"])
    aten.disable()
    print(f"enable()/disable(): {ks} then {kernels_in(calls['_softmax'])}")

    # The planted library: what each defect does on the device (expected to be wrong).
    try:
        import opverify_brokenlib as broken
        from opverify_brokenlib import aten as broken_aten
        x = rnd(16, 1000, dtype=torch.float16)
        x1024 = rnd(16, 1024, dtype=torch.float16)
        print("brokenlib softmax_aligned_only: row sums - 1, 1024 cols",
              float((broken.softmax_aligned_only(x1024).float().sum(-1) - 1).abs().max()),
              "1000 cols", float((broken.softmax_aligned_only(x).float().sum(-1) - 1).abs().max()))
        with broken_aten.enabled_wrong_key():
            print("brokenlib wrong key gelu kernels:", kernels_in(lambda: F.gelu(x)))
        broken_aten.enable_dropped()
        print("brokenlib dropped silu kernels:", kernels_in(lambda: F.silu(x)))
        with broken_aten.enabled_decoy():
            y = torch.softmax(x, -1)
            print("brokenlib decoy softmax kernels:", kernels_in(lambda: torch.softmax(x, -1)),
                  "max err", float((y.float() - torch.softmax(x.float(), -1)).abs().max()))
    except Exception as e:  # the self-check reports, it does not stop at the planted library
        print("brokenlib check raised:", repr(e))
    print(f"{len(failures)} failures: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
