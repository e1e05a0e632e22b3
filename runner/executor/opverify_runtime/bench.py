"""Timing a case's framework (Model on the device) and implementation
(ModelNew): the executor side of `opverify bench` and of the batch's
performance phase.

One repeat, on a device: a full synchronize, a device-side busy wait long
enough to cover the host's launches that follow, the L2 cache flushed (a
256 MB buffer zeroed, as triton.testing.do_bench does), a start event, the
forward, an end event, and the end event waited for. The busy wait
(torch.cuda._sleep, calibrated in cycles per microsecond) is three times
the longest host time the forward took to launch in five trials, plus 50 us: the whole forward
is queued before the start event fires, so the events measure the device's
own time, as do_bench's queue-ahead does, and not the host's launch latency,
which would dominate microsecond kernels after a synchronize. A repeat
whose launch took longer than the wait is counted (launch_not_hidden). On
the cpu backend a repeat is the forward timed with the monotonic clock.

Peak memory is measured in a run of its own, before the flush buffer
exists: the allocator's peak statistic, reset just before the forward.
The per-kernel breakdown comes from torch.profiler over a few extra
iterations (no flush), as milliseconds per forward.
"""
import math
import statistics
import time

L2_FLUSH_BYTES = 256 * 1024 * 1024


def summarize(times_ms):
    n = len(times_ms)
    mean = statistics.fmean(times_ms)
    stdev = statistics.stdev(times_ms) if n > 1 else 0.0
    return {"median_ms": statistics.median(times_ms), "mean_ms": mean, "stdev_ms": stdev,
            "min_ms": min(times_ms), "max_ms": max(times_ms), "repeats": n,
            "rse": (stdev / math.sqrt(n) / mean) if n > 1 and mean > 0 else None}


def relative_standard_error(times_ms):
    n = len(times_ms)
    if n < 2:
        return math.inf
    mean = statistics.fmean(times_ms)
    return statistics.stdev(times_ms) / math.sqrt(n) / mean if mean > 0 else math.inf


class Timer:
    """Times one callable by the rules above."""

    def __init__(self, torch, backend, flush_l2=True):
        self.torch = torch
        self.backend = backend
        self.on_device = backend.name != "cpu"
        self.flush_l2 = flush_l2 and self.on_device
        self._flush_buffer = None
        self._cycles_per_us = None
        self.cover_us = 0.0

    def _event(self):
        module = getattr(self.torch, self.backend.name)
        return module.Event(enable_timing=True)

    def _flush(self):
        if self._flush_buffer is None:
            self._flush_buffer = self.torch.empty(L2_FLUSH_BYTES // 4, dtype=self.torch.int32,
                                                  device=self.backend.device())
        self._flush_buffer.zero_()

    def release(self):
        self._flush_buffer = None

    def _sleep_function(self):
        return getattr(self.torch.cuda, "_sleep", None) if self.backend.name == "cuda" else None

    def _calibrate(self, fn):
        """Cycles per microsecond of the busy wait, and how long it must be:
        three times the longest host launch time of the forward in five trials, plus 50 us."""
        self._cycles_per_us = None
        self.cover_us = 0.0
        sleep = self._sleep_function()
        if sleep is None:
            return
        self.backend.synchronize()
        start, end = self._event(), self._event()
        start.record()
        sleep(1_000_000)
        end.record()
        end.synchronize()
        elapsed_us = start.elapsed_time(end) * 1e3
        if elapsed_us <= 0:
            return
        self._cycles_per_us = 1_000_000 / elapsed_us
        launches = []
        for _ in range(5):
            self.backend.synchronize()
            started = time.perf_counter()
            fn()
            launches.append((time.perf_counter() - started) * 1e6)
        self.backend.synchronize()
        # Host launch times jitter (the allocator, the interpreter): a wide margin.
        self.cover_us = min(20_000.0, 3 * max(launches) + 50.0)

    def one(self, fn):
        """Returns (device or monotonic ms, wall ms from before the launch to
        a full synchronize, whether the launch outlasted the busy wait)."""
        if not self.on_device:
            started = time.perf_counter()
            fn()
            elapsed = (time.perf_counter() - started) * 1e3
            return elapsed, elapsed, False
        start, end = self._event(), self._event()
        self.backend.synchronize()
        wall_started = time.perf_counter()
        # The wait comes first and the flush right before the forward, as in
        # do_bench: the forward starts on a cold L2 still busy writing back.
        if self._cycles_per_us:
            self._sleep_function()(int(self.cover_us * self._cycles_per_us))
        if self.flush_l2:
            self._flush()
        start.record()
        fn()
        end.record()
        launched_us = (time.perf_counter() - wall_started) * 1e6
        end.synchronize()
        self.backend.synchronize()  # work on other streams is waited for (and shows in wall_ms)
        wall = (time.perf_counter() - wall_started) * 1e3
        return start.elapsed_time(end), wall, bool(self._cycles_per_us) and launched_us > self.cover_us

    def repeats(self, fn, repeats, adaptive=False, max_repeats=None, rse_target=0.01, max_seconds=60.0):
        """At least `repeats` timings; with `adaptive`, more until the relative
        standard error of the mean is under rse_target, at most max_repeats
        or max_seconds."""
        max_repeats = max(repeats, max_repeats or repeats * 20) if adaptive else repeats
        if self.on_device:
            self._calibrate(fn)
        times, walls = [], []
        not_hidden = 0
        started = time.perf_counter()
        while True:
            device_ms, wall_ms, exposed = self.one(fn)
            times.append(device_ms)
            walls.append(wall_ms)
            not_hidden += exposed
            n = len(times)
            if n >= max_repeats:
                stop = "max_repeats" if adaptive else "repeats"
                break
            if n >= repeats:
                if not adaptive:
                    stop = "repeats"
                    break
                if relative_standard_error(times) < rse_target:
                    stop = "rse"
                    break
                if time.perf_counter() - started > max_seconds:
                    stop = "max_seconds"
                    break
        stats = summarize(times)
        stats["wall_median_ms"] = statistics.median(walls)
        stats["stopped_by"] = stop
        if self.on_device:
            stats["launch_cover_us"] = self.cover_us if self._cycles_per_us else None
            stats["launch_not_hidden"] = not_hidden
        return stats

    def peak_memory_mb(self, fn, resident_bytes=0):
        """(peak, added): the allocator's peak during one forward and how much
        of it the forward itself added to what was allocated before, in MiB.
        On the cpu backend, which keeps no allocator statistics: the growth
        of the process's resident set during the forward (cpu_rss_growth),
        added to `resident_bytes` (the forward's inputs and the model's
        state); (None, None) where Linux's /proc cannot say."""
        if not self.on_device:
            added = cpu_rss_growth(fn)
            if added is None:
                return None, None
            mib = 1024.0 * 1024.0
            return (resident_bytes + added) / mib, added / mib
        self.release()  # the flush buffer is the benchmark's, not the forward's
        self.backend.synchronize()
        self.backend.reset_peak_memory()
        before = self.backend.allocated_bytes()
        fn()
        self.backend.synchronize()
        peak = self.backend.peak_memory_bytes()
        if peak is None:
            return None, None
        mib = 1024.0 * 1024.0
        return peak / mib, (peak - before) / mib if before is not None else None


def do_bench_ms(backend, fn):
    """triton.testing.do_bench's median of the same callable (its own warm-up, L2 flush and
    repeats), in ms: a second clock beside ours, recorded for the dispatch-override operators,
    whose call goes through the library's Python wrappers. None off cuda or without Triton."""
    if backend.name != "cuda":
        return None
    try:
        from triton.testing import do_bench
    except ImportError:
        return None
    return float(do_bench(fn, return_mode="median"))


def _status_bytes(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1]) * 1024  # kB
    return None


def cpu_rss_growth(fn):
    """Bytes by which one call of fn raised the process's resident set above
    what it was before: Linux's high-water mark (VmHWM), reset to the current
    resident set through /proc/self/clear_refs ("5"), read after the call.
    Large tensors are mapped pages of their own, so they show; small ones may
    come from memory the process already holds, so this is a lower bound.
    None where /proc does not offer this."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        before = _status_bytes("VmRSS")
        fn()
        peak = _status_bytes("VmHWM")
    except OSError:
        return None
    if before is None or peak is None:
        return None
    return max(0, peak - before)


def state_bytes(tensors):
    """Bytes of the distinct tensors among `tensors` (one passed twice counts
    once)."""
    seen, total = set(), 0
    for t in tensors:
        try:
            key = (t.data_ptr(), t.numel(), t.dtype)
        except RuntimeError:  # no storage of its own (sparse, meta): by identity
            key = id(t)
        if key not in seen:
            seen.add(key)
            total += t.numel() * t.element_size()
    return total


def kernel_breakdown(torch, backend, fn, iterations):
    """{kernel or operator name: milliseconds per forward}, from torch.profiler:
    device kernels (their own time) on a device, aten operators' self time
    on the cpu backend."""
    if iterations <= 0:
        return {}
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU]
    on_device = backend.name == "cuda"
    if on_device:
        activities.append(ProfilerActivity.CUDA)
    with profile(activities=activities) as prof:
        for _ in range(iterations):
            fn()
        backend.synchronize()
    return profiled_times(torch, prof, on_device, iterations)


def device_us(event):
    """A device event's own time in microseconds, whichever name this torch gives it."""
    for name in ("self_device_time_total", "device_time_total", "self_cuda_time_total", "cuda_time_total"):
        us = getattr(event, name, 0) or 0
        if us:
            return us
    return 0


def device_kernels(torch, prof):
    """{name: (launches, microseconds)} of the device's own events (kernels,
    copies, fills) in a finished profile, not the CPU operators that
    launched them, so nothing counts twice."""
    kernels = {}
    device_kernel = getattr(getattr(torch.autograd, "DeviceType", None), "CUDA", None)
    for event in prof.key_averages():
        if getattr(event, "device_type", None) != device_kernel:
            continue
        launches, total = kernels.get(event.key, (0, 0.0))
        kernels[event.key] = (launches + int(getattr(event, "count", 1) or 1), total + float(device_us(event)))
    return kernels


def profiled_times(torch, prof, on_device, iterations=1):
    """{name: milliseconds per iteration} of a finished profile: the device's
    own events on a device (device_kernels), aten operators' self time on the
    cpu backend. Largest first."""
    if on_device:
        totals = {name: us / 1e3 / iterations for name, (_, us) in device_kernels(torch, prof).items() if us > 0}
    else:
        totals = {}
        for event in prof.key_averages():
            us = event.self_cpu_time_total if event.key.startswith("aten::") else 0
            if us and us > 0:
                totals[event.key] = totals.get(event.key, 0.0) + us / 1e3 / iterations
    return dict(sorted(totals.items(), key=lambda item: -item[1]))
