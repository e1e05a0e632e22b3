"""The runtime evidence's tally of the device's kernels in a profile (bench.device_kernels): read
from the profiler's raw events where torch keeps them, from key_averages() otherwise. An
autotuning forward records hundreds of thousands of events, and key_averages() builds an object
tree of all of them first (docs/PERFORMANCE.md, "A cold cache's autotuning inside the checks").
Here torch's profile is stood in for where a device is needed; on a real torch, its CPU events.
tests/python/test_gpu_ops.py checks the two readings against each other on a CUDA device."""
import types

import pytest

from opverify_runtime import bench

CPU, CUDA = "cpu-device", "cuda-device"
TORCH = types.SimpleNamespace(autograd=types.SimpleNamespace(DeviceType=types.SimpleNamespace(CPU=CPU, CUDA=CUDA)))


class RawEvent:
    def __init__(self, name, device, ns):
        self._name, self._device, self._ns = name, device, ns

    def name(self):
        return self._name

    def device_type(self):
        return self._device

    def duration_ns(self):
        return self._ns


class Profile:
    """A finished profile: raw events (or none kept), and key_averages()'s rows."""

    def __init__(self, raw=None, averages=()):
        if raw is not None:
            self.profiler = types.SimpleNamespace(kineto_results=types.SimpleNamespace(events=lambda: raw))
        self.averages = list(averages)
        self.averaged = False

    def key_averages(self):
        self.averaged = True
        return self.averages


def test_the_raw_events_are_tallied_by_name_and_key_averages_is_not_built():
    raw = [RawEvent("aten::mul", CPU, 9000), RawEvent("cudaLaunchKernel", CPU, 4000),
           RawEvent("scale_kernel", CUDA, 1500), RawEvent("scale_kernel", CUDA, 2500),
           RawEvent("Memcpy DtoH (Device -> Pageable)", CUDA, 800)]
    prof = Profile(raw)
    assert bench.device_kernels(TORCH, prof) == {"scale_kernel": (2, 4.0), "Memcpy DtoH (Device -> Pageable)": (1, 0.8)}
    assert not prof.averaged


def test_a_raw_name_is_demangled_as_key_averages_gives_it():
    """The profiler's own parse demangles each name (torch._C._demangle) before key_averages()
    groups by it; the raw read does the same, once a name."""
    asked = []

    def demangle(name):
        asked.append(name)
        return {"_Z8kernel_av": "kernel_a()"}.get(name, name)
    torch = types.SimpleNamespace(autograd=TORCH.autograd, _C=types.SimpleNamespace(_demangle=demangle))
    raw = [RawEvent("_Z8kernel_av", CUDA, 1000), RawEvent("_Z8kernel_av", CUDA, 1000),
           RawEvent("triton_kernel", CUDA, 500)]
    assert bench.device_kernels(torch, Profile(raw)) == {"kernel_a()": (2, 2.0), "triton_kernel": (1, 0.5)}
    assert asked == ["_Z8kernel_av", "triton_kernel"]


def test_without_raw_events_key_averages_is_read_as_before():
    rows = [types.SimpleNamespace(key="aten::mul", device_type=CPU, count=1, self_cpu_time_total=9.0),
            types.SimpleNamespace(key="scale_kernel", device_type=CUDA, count=2, self_device_time_total=4.0)]
    prof = Profile(None, rows)
    assert bench.device_kernels(TORCH, prof) == {"scale_kernel": (2, 4.0)}
    assert prof.averaged


def test_raw_events_this_torch_cannot_read_fall_back_to_key_averages():
    class Unreadable(RawEvent):
        def device_type(self):
            raise RuntimeError("no device type in this build")
    rows = [types.SimpleNamespace(key="scale_kernel", device_type=CUDA, count=1, self_device_time_total=1.5)]
    prof = Profile([Unreadable("scale_kernel", CUDA, 1500)], rows)
    assert bench.device_kernels(TORCH, prof) == {"scale_kernel": (1, 1.5)}
    assert prof.averaged


def test_a_real_torch_profile_has_raw_events_that_agree_with_key_averages():
    """On this machine's torch (CPU): the raw read finds the operators key_averages() lists,
    with their calls, and no device kernels where there is no device."""
    torch = pytest.importorskip("torch")
    from torch.profiler import ProfilerActivity, profile
    x = torch.randn(64, 64)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for _ in range(3):
            x = torch.mm(x, x).mul_(0.01)
    raw = bench.raw_device_events(torch, prof, torch.autograd.DeviceType.CPU)
    if raw is None:
        pytest.skip(f"torch {torch.__version__} keeps no raw events: device_kernels reads key_averages()")
    calls = {}
    for name, us in raw:
        assert us >= 0, (name, us)
        calls[name] = calls.get(name, 0) + 1
    averaged = {e.key: e.count for e in prof.key_averages()}
    assert calls["aten::mm"] == averaged["aten::mm"] == 3
    assert calls["aten::mul_"] == averaged["aten::mul_"] == 3
    assert bench.device_kernels(torch, prof) == {}


def test_the_benchmark_of_the_two_readings_says_what_it_needs_without_a_device():
    """perf/autotune_profile.py measures both readings on a CUDA device (tools/gpu_check.sh
    autotune-profile); elsewhere it exits 2 with what is missing."""
    import os
    import subprocess
    import sys
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a CUDA device is here: tests/python/test_gpu_ops.py's check runs instead")
    root = os.path.join(os.path.dirname(__file__), "..", "..")
    proc = subprocess.run([sys.executable, os.path.join(root, "perf", "autotune_profile.py")], capture_output=True,
                          text=True, timeout=120, env=dict(os.environ, PYTHONPATH=os.path.join(root, "runner", "executor")))
    assert proc.returncode == 2 and proc.stderr.startswith("autotune_profile: "), proc.stderr
    assert "triton" in proc.stderr or "CUDA" in proc.stderr, proc.stderr
