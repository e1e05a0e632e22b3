#!/usr/bin/env python3
"""What an autotuning forward costs the runtime evidence (docs/PERFORMANCE.md, "A cold cache's
autotuning inside the checks"). An autotuned Triton kernel's first call, which benchmarks every
configuration, then its second, which runs the tuned one, each inside the recorders the
executor's first run has (torch.profiler over CPU and CUDA, the dispatch trace, the launch
recorder); then what the checks read of them, timed apart: the device kernels through
key_averages() (as bench.device_kernels read them until the raw read: the baseline), the same
tally from the profiler's raw (kineto) events, and the launch record's report. Both tallies are
the script's own, so it measures the same on either tree.

    PYTHONPATH=runner/executor python3 perf/autotune_profile.py [--configs 24] [--json OUT]

Needs CUDA and Triton (exit 2 without them). Prints one line a phase and a JSON summary.
"""
import argparse
import json
import os
import sys
import tempfile
import time


def tally_raw(prof, torch):
    """{kernel name: launches} of the device's events, read from the profiler's raw (kineto)
    events, each name demangled as the profiler's own parse does; (tally, events seen)."""
    cuda = torch.autograd.DeviceType.CUDA
    demangle = torch._C._demangle
    kernels, seen = {}, 0
    for event in prof.profiler.kineto_results.events():
        seen += 1
        if event.device_type() == cuda:
            name = event.name()
            name = demangle(name) if len(name) > 1 else name
            kernels[name] = kernels.get(name, 0) + 1
    return kernels, seen


def tally_averaged(prof, torch):
    """{kernel name: launches} of the device's events through key_averages() (which first builds
    an event object, its parent and its children, for every event recorded)."""
    cuda = torch.autograd.DeviceType.CUDA
    return {e.key: e.count for e in prof.key_averages() if e.device_type == cuda}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--configs", type=int, default=24, help="autotune configurations (up to 48)")
    parser.add_argument("--size", type=int, default=1 << 20, help="elements of the kernel's input")
    parser.add_argument("--json", help="write the summary here too")
    args = parser.parse_args()
    os.environ.setdefault("TRITON_CACHE_DIR", tempfile.mkdtemp(prefix="opverify-autotune-"))  # cold
    try:
        import torch
        import triton
        import triton.language as tl
    except ImportError as error:
        print(f"autotune_profile: {error}", file=sys.stderr)
        return 2
    if not torch.cuda.is_available():
        print("autotune_profile: no CUDA device", file=sys.stderr)
        return 2
    from opverify_runtime import runtime_evidence
    from torch.profiler import ProfilerActivity, profile

    grid_of = [(block, warps, stages) for block in (128, 256, 512, 1024) for warps in (1, 2, 4, 8)
               for stages in (1, 2, 3)][:args.configs]

    @triton.autotune(configs=[triton.Config({"BLOCK": b}, num_warps=w, num_stages=s) for b, w, s in grid_of],
                     key=["n"])
    @triton.jit
    def scale_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0 + tl.load(y_ptr + offs, mask=mask),
                 mask=mask)

    x = torch.randn(args.size, device="cuda")
    y = torch.randn_like(x)
    module = sys.modules[__name__]
    summary = {"configs": len(grid_of), "size": args.size, "torch": torch.__version__, "triton": triton.__version__,
               "device": torch.cuda.get_device_name()}
    for run in ("cold", "warm"):
        out = torch.empty_like(x)
        started = time.perf_counter()
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof, \
                runtime_evidence.DispatchTrace(torch), runtime_evidence.launch_recorder(module, ()) as launches:
            scale_add[lambda meta: (triton.cdiv(args.size, meta["BLOCK"]),)](x, y, out, args.size)
            torch.cuda.synchronize()
            forward = time.perf_counter() - started
        recorded = time.perf_counter() - started - forward  # the recorders' exits (the profile stopped)
        assert torch.equal(out, x * 2.0 + y)
        began = time.perf_counter()
        raw, events = tally_raw(prof, torch)
        raw_s = time.perf_counter() - began
        began = time.perf_counter()
        averaged = tally_averaged(prof, torch)
        averages_s = time.perf_counter() - began
        began = time.perf_counter()
        report = launches.report() if launches.active else None
        report_s = time.perf_counter() - began
        figures = {"forward_s": forward, "recorders_exit_s": recorded, "raw_events": events,
                   "key_averages_s": averages_s, "raw_tally_s": raw_s, "launch_report_s": report_s,
                   "device_launches": sum(averaged.values()), "device_launches_raw": sum(raw.values()),
                   "same_kernels": averaged == raw,
                   "launches_recorded": sum(e["launches"] for e in report.values()) if report is not None else None}
        summary[run] = figures
        print(f"{run}: forward {forward:.2f} s, recorders' exit {recorded:.2f} s, {events} raw events; "
              f"key_averages() {averages_s:.2f} s ({figures['device_launches']} device launches), "
              f"raw tally {raw_s:.2f} s ({figures['device_launches_raw']}, same kernels: {figures['same_kernels']}), "
              f"launch report {report_s:.2f} s", flush=True)
    print(json.dumps(summary))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(summary, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
