"""The executor's compile clock: how it chains into Triton's JIT hooks.
Triton does not run on this machine; `triton.knobs` is stood in for by an
object with the same two hook attributes, and the calls are made in the
order Triton's JIT makes them (pre hook, compile, post hook). On the H200,
tests/python/test_gpu_ops.py checks the clock against real compilations."""
import sys
import time
import types

import pytest

from opverify_runtime.compile_clock import CompileClock


@pytest.fixture
def triton_knobs(monkeypatch):
    runtime = types.SimpleNamespace(jit_cache_hook=None, jit_post_compile_hook=None)
    module = types.ModuleType("triton")
    module.knobs = types.SimpleNamespace(runtime=runtime)
    monkeypatch.setitem(sys.modules, "triton", module)
    return module.knobs


def compile_once(runtime, seconds):
    skipped = runtime.jit_cache_hook(key="k", repr="r", fn=None, compile={}, is_manual_warmup=False,
                                     already_compiled=False)
    if skipped:
        return
    time.sleep(seconds)
    runtime.jit_post_compile_hook(key="k", repr="r", fn=None, compile={}, is_manual_warmup=False,
                                  already_compiled=False)


def test_without_triton_nothing_is_measured(monkeypatch):
    monkeypatch.delitem(sys.modules, "triton", raising=False)
    clock = CompileClock()
    assert not clock.install()
    assert clock.take() == (None, None)


def test_times_each_compilation_and_resets_on_take(triton_knobs):
    clock = CompileClock()
    assert clock.install() and clock.installed == "jit_hooks"
    compile_once(triton_knobs.runtime, 0.02)
    compile_once(triton_knobs.runtime, 0.03)
    ms, count = clock.take()
    assert count == 2 and 45 <= ms < 500
    assert clock.take() == (0.0, 0)


def test_keeps_hooks_that_were_already_set(triton_knobs):
    seen = []
    triton_knobs.runtime.jit_cache_hook = lambda **kw: seen.append("pre")
    triton_knobs.runtime.jit_post_compile_hook = lambda **kw: seen.append("post")
    clock = CompileClock()
    clock.install()
    compile_once(triton_knobs.runtime, 0)
    assert seen == ["pre", "post"]
    assert clock.take()[1] == 1


def test_a_hook_that_skips_compilation_is_not_timed(triton_knobs):
    triton_knobs.runtime.jit_cache_hook = lambda **kw: True
    clock = CompileClock()
    clock.install()
    compile_once(triton_knobs.runtime, 0.01)
    assert clock.take() == (0.0, 0)


def test_a_failed_compilation_leaves_nothing_behind(triton_knobs):
    clock = CompileClock()
    clock.install()
    triton_knobs.runtime.jit_cache_hook(key="k")  # the compiler raised: no post hook
    assert clock.take() == (0.0, 0)
    compile_once(triton_knobs.runtime, 0)
    assert clock.take()[1] == 1


def test_installs_once(triton_knobs):
    clock = CompileClock()
    clock.install()
    hook = triton_knobs.runtime.jit_cache_hook
    clock.install()
    assert triton_knobs.runtime.jit_cache_hook is hook
