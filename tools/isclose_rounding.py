#!/usr/bin/env python3
"""Which rounding does this torch's isclose use in half precision? (docs/LIBRARIES.md, isclose)

ATen computes isclose as `atol + (rtol * other).abs()` against `(self - other).abs()`, each
step a tensor operation in the inputs' dtype; whether the scalars rtol and atol enter in float
(opmath) or rounded to the dtype first is the kernel's choice, and it has changed between torch
versions and differs between dtypes. A bool output judged exactly shows every difference on the
tolerance boundary, so our test library's kernel has to round as the golden does.

This runs jobs/library/tasks/isclose_torch.py's inputs (several seeds and shapes) through torch's
CPU isclose (the golden), through torch's CUDA isclose where there is a GPU, and through four
emulations (float32 arithmetic, each step rounded to the dtype):
  opmath   rtol and atol in float32                         (our kernel's rounding)
  atol_dt  rtol in float32, atol rounded to the dtype first
  rtol_dt  rtol rounded to the dtype first, atol in float32
  both_dt  both rounded to the dtype first                  (torch 1.13's CPU)
and, with Triton on a GPU, each emulation as a Triton kernel and the library's own kernel. It
prints one JSON object: per dtype, each one's count of elements that differ from the golden.
Usage: isclose_rounding.py [--seeds N]"""
import argparse
import importlib.util
import json
import os
import sys

import torch

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RTOL = ATOL = 0.05  # the task's
MODES = ("opmath", "atol_dt", "rtol_dt", "both_dt")


def load_task():
    """jobs/library/tasks/isclose_torch.py, whose get_inputs makes the pairs."""
    spec = importlib.util.spec_from_file_location(
        "isclose_task", os.path.join(ROOT, "jobs", "library", "tasks", "isclose_torch.py"))
    task = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(task)
    return task


def task_inputs(task, rows, cols, dtype, seed):
    torch.manual_seed(seed)
    return task.get_inputs(rows=rows, cols=cols, dtype=dtype)


def scalar(value, dt, rounded):
    """A tolerance as the arithmetic sees it: float32, or rounded to the dtype first."""
    t = torch.tensor(value, dtype=torch.float32)
    return t.to(dt).float() if rounded else t


def emulate(a, b, mode):
    """isclose in float32 steps, each rounded to the inputs' dtype, the scalars per `mode`."""
    dt = a.dtype
    af, bf = a.float(), b.float()
    rtol = scalar(RTOL, dt, mode in ("rtol_dt", "both_dt"))
    atol = scalar(ATOL, dt, mode in ("atol_dt", "both_dt"))
    actual = (af - bf).to(dt).float().abs()
    allowed = (atol + (rtol * bf).to(dt).float().abs()).to(dt).float()
    return (af == bf) | (torch.isfinite(actual) & (actual <= allowed))


def triton_variants():
    """Each emulation as a Triton kernel (the form our library's kernel would take), or {}."""
    try:
        import triton
        import triton.language as tl
    except ImportError:
        return {}

    @triton.jit
    def kernel(a_ptr, b_ptr, out_ptr, n, rtol, atol, RTOL_DT: tl.constexpr, ATOL_DT: tl.constexpr,
               BLOCK: tl.constexpr):
        offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        dt = a_ptr.dtype.element_ty
        a = tl.load(a_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
        r = tl.zeros_like(a) + rtol
        t = tl.zeros_like(a) + atol
        if RTOL_DT:
            r = r.to(dt).to(tl.float32)
        if ATOL_DT:
            t = t.to(dt).to(tl.float32)
        actual = tl.abs((a - b).to(dt).to(tl.float32))
        allowed = (t + tl.abs((r * b).to(dt).to(tl.float32))).to(dt).to(tl.float32)
        close = (a == b) | ((actual < float("inf")) & (actual <= allowed))
        tl.store(out_ptr + offs, close.to(tl.uint8), mask=mask)

    def run(a, b, mode):
        out = torch.empty(a.shape, dtype=torch.uint8, device=a.device)
        n = a.numel()
        kernel[(triton.cdiv(n, 1024),)](a.contiguous(), b.contiguous(), out, n, RTOL, ATOL,
                                        RTOL_DT=mode in ("rtol_dt", "both_dt"),
                                        ATOL_DT=mode in ("atol_dt", "both_dt"), BLOCK=1024)
        return out.bool()
    return {f"triton_{m}": (lambda a, b, m=m: run(a, b, m)) for m in MODES}


def library_kernel():
    sys.path.insert(0, os.path.join(ROOT, "jobs", "library"))
    try:
        import opverify_testlib
    except ImportError as e:
        print(f"isclose_rounding: the library's kernel is left out: {e}", file=sys.stderr)
        return {}
    return {"library": lambda a, b: opverify_testlib.isclose(a, b, rtol=RTOL, atol=ATOL)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=5)
    args = ap.parse_args()
    cuda = torch.cuda.is_available()
    on_gpu = {}
    if cuda:
        on_gpu["torch_cuda"] = lambda a, b: torch.isclose(a, b, rtol=RTOL, atol=ATOL)
        on_gpu.update(triton_variants())
        on_gpu.update(library_kernel())
    task = load_task()
    result = {"torch": torch.__version__, "cuda": cuda, "rtol": RTOL, "atol": ATOL, "dtypes": {}}
    for dtype in ("float16", "bfloat16", "float32"):
        counts, elements = {}, 0
        for seed in range(args.seeds):
            for cols in (1000, 4097):
                a, b = task_inputs(task, 33, cols, dtype, seed)
                golden = torch.isclose(a, b, rtol=RTOL, atol=ATOL)
                elements += golden.numel()
                for mode in MODES:
                    counts[mode] = counts.get(mode, 0) + int((emulate(a, b, mode) != golden).sum())
                for name, fn in on_gpu.items():
                    got = fn(a.cuda(), b.cuda()).cpu()
                    counts[name] = counts.get(name, 0) + int((got != golden).sum())
        result["dtypes"][dtype] = {"elements": elements, "differ_from_cpu_golden": counts}
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
