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


@pytest.fixture
def triton_with_listener(triton_knobs):
    triton_knobs.compilation = types.SimpleNamespace(listener=None)
    return triton_knobs


def compile_through_listener(knobs, seconds, cache_hit):
    """As Triton's JIT: the pre hook, the compiler (which calls the listener
    with cache_hit), the post hook."""
    knobs.runtime.jit_cache_hook(key="k")
    time.sleep(seconds)
    knobs.compilation.listener(src=None, metadata={}, metadata_group={}, times=None, cache_hit=cache_hit)
    knobs.runtime.jit_post_compile_hook(key="k")


def test_counts_what_the_disk_cache_served(triton_with_listener):
    seen = []
    triton_with_listener.compilation.listener = lambda **kw: seen.append(kw["cache_hit"])
    clock = CompileClock()
    assert clock.install() and clock.installed == "jit_hooks" and clock.hits_known
    compile_through_listener(triton_with_listener, 0.03, cache_hit=False)
    compile_through_listener(triton_with_listener, 0.01, cache_hit=True)
    compile_through_listener(triton_with_listener, 0.01, cache_hit=True)
    taken = clock.take()
    ms, count = taken
    assert count == 3 and taken.cached_count == 2
    assert 15 <= taken.cached_ms < ms and ms >= 45
    assert seen == [False, True, True]  # the listener that was there still hears every compilation
    again = clock.take()
    assert again == (0.0, 0) and (again.cached_ms, again.cached_count) == (0.0, 0)


def test_a_hit_is_not_carried_into_the_next_compilation(triton_with_listener):
    clock = CompileClock()
    clock.install()
    triton_with_listener.runtime.jit_cache_hook(key="k")
    triton_with_listener.compilation.listener(cache_hit=True)  # the load raised: no post hook
    clock.take()
    compile_through_listener(triton_with_listener, 0, cache_hit=False)
    assert clock.take().cached_count == 0


def test_the_listener_alone_times_and_counts_hits(monkeypatch):
    module = types.ModuleType("triton")
    module.knobs = types.SimpleNamespace(compilation=types.SimpleNamespace(listener=None))
    monkeypatch.setitem(sys.modules, "triton", module)
    clock = CompileClock()
    assert clock.install() and clock.installed == "listener"
    listener = module.knobs.compilation.listener
    listener(times=types.SimpleNamespace(total=40_000), cache_hit=False)
    listener(times=types.SimpleNamespace(total=2_000), cache_hit=True)
    taken = clock.take()
    assert taken == (42.0, 2) and (taken.cached_ms, taken.cached_count) == (2.0, 1)


def test_without_the_listener_hits_are_unknown(triton_knobs):
    clock = CompileClock()
    clock.install()
    compile_once(triton_knobs.runtime, 0)
    taken = clock.take()
    assert taken[1] == 1 and taken.cached_ms is None and taken.cached_count is None


def test_a_listener_replaced_after_the_clock_makes_hits_unknown(triton_with_listener):
    clock = CompileClock()
    clock.install()
    triton_with_listener.compilation.listener = lambda **kw: None  # a library's own, set later
    compile_through_listener(triton_with_listener, 0, cache_hit=True)
    taken = clock.take()
    assert taken[1] == 1 and taken.cached_count is None  # unknown, not "none from the cache"
