"""How long Triton spends compiling, so a case's time can be split into
compilation and the implementation's own run.

Triton compiles a kernel specialisation on its first launch in a process,
inside ModelNew.forward. Its runtime calls `knobs.runtime.jit_cache_hook`
just before compiling (or loading from its disk cache) and
`knobs.runtime.jit_post_compile_hook` just after; the clock takes the time
between the two. Hooks that were already set stay in the chain. Where
the installed Triton has neither hook, only the compile listener
(`knobs.compilation.listener`, the compiler's own stage times) is used;
where it has none of these, compile time is unknown (None).

Which of those compilations Triton's disk cache served (a kernel loaded, not
compiled: what a warm `--cache-dir` saves) comes from the same listener,
chained beside the hooks: Triton calls it inside each compilation with
`cache_hit`. Where the listener is missing, that part is unknown (None).

The clock also tells the parent when a warm-up begins and ends (the first
compilation starts, the last one in flight ends; an autotuner's
benchmarking of its configurations counts too), as events on the reply
pipe (protocol.h): the parent keeps that time out of the case's timeout,
within the operator's warm-up allowance. The listener fires only after a
compilation, so where it is all there is, only autotuning is announced.
"""
import json
import sys
import time

try:  # the executor's own channel to its parent; absent outside opverify-executor
    import opverify_channel
except ImportError:
    opverify_channel = None

_START = json.dumps({"event": "warmup", "state": "start"})
_END = json.dumps({"event": "warmup", "state": "end"})


class Taken(tuple):
    """What take() returns: (compile ms, kernels), and as attributes the part
    of it Triton's disk cache served (cached_ms, cached_count; None where the
    compile listener is not installed)."""

    def __new__(cls, ms, count, cached_ms=None, cached_count=None):
        taken = super().__new__(cls, (ms, count))
        taken.cached_ms, taken.cached_count = cached_ms, cached_count
        return taken


class CompileClock:
    def __init__(self):
        self.installed = None      # "jit_hooks", "listener", or None
        self._listening = None     # (Triton's compilation knobs, our listener) once chained
        self._started = []         # start times of compilations in flight
        self._ms = 0.0
        self._count = 0
        self._cached_ms = 0.0
        self._cached_count = 0
        self._hit = False          # the compilation in flight was a cache hit
        self._warming = 0          # compilations and autotunings in flight

    def _warmup_begins(self):
        self._warming += 1
        if self._warming == 1 and opverify_channel is not None:
            opverify_channel.send(_START)

    def _warmup_ends(self):
        if self._warming == 0:
            return
        self._warming -= 1
        if self._warming == 0 and opverify_channel is not None:
            opverify_channel.send(_END)

    def install(self):
        """Hooks into Triton once it has been imported (by an implementation).
        Returns whether compile time is measured."""
        if self.installed is not None:
            return True
        self._wrap_autotuner()
        triton = sys.modules.get("triton")
        knobs = getattr(triton, "knobs", None) if triton is not None else None
        runtime = getattr(knobs, "runtime", None)
        compilation = getattr(knobs, "compilation", None)
        has_listener = compilation is not None and hasattr(compilation, "listener")
        if runtime is not None and hasattr(runtime, "jit_cache_hook") and hasattr(runtime, "jit_post_compile_hook"):
            self._chain(runtime)
            self.installed = "jit_hooks"
            if has_listener:
                self._listen(compilation, timed=False)
            return True
        if has_listener:
            self._listen(compilation, timed=True)
            self.installed = "listener"
            return True
        return False

    def _listen(self, compilation, timed):
        """Chains into the compile listener: the cache hit of each compilation
        and, where it is the only hook (timed), its stage times too."""
        previous = compilation.listener

        def listener(*args, **kwargs):
            hit = bool(kwargs.get("cache_hit", False))
            if timed:
                total = getattr(kwargs.get("times"), "total", None)
                ms = total / 1e3 if total is not None else 0.0
                self._ms += ms
                self._count += 1
                if hit:
                    self._cached_ms += ms
                    self._cached_count += 1
            else:
                self._hit = hit  # the post hook, next, times it
            if previous is not None:
                previous(*args, **kwargs)

        compilation.listener = listener
        self._listening = (compilation, listener)

    @property
    def hits_known(self):
        """Whether the compile listener reports cache hits to this clock: chained, and not
        replaced since (a library that sets its own would hide them)."""
        return self._listening is not None and self._listening[0].listener is self._listening[1]

    def _wrap_autotuner(self):
        """Announces each autotuner benchmark of a configuration as warm-up."""
        autotuner = sys.modules.get("triton.runtime.autotuner")
        tuner = getattr(autotuner, "Autotuner", None) if autotuner is not None else None
        bench = getattr(tuner, "_bench", None) if tuner is not None else None
        if bench is None or getattr(bench, "_opverify_warmup", False):
            return
        clock = self

        def _bench(*args, **kwargs):
            clock._warmup_begins()
            try:
                return bench(*args, **kwargs)
            finally:
                clock._warmup_ends()

        _bench._opverify_warmup = True
        tuner._bench = _bench

    def _chain(self, runtime):
        previous_pre = runtime.jit_cache_hook
        previous_post = runtime.jit_post_compile_hook

        def pre(*args, **kwargs):
            result = previous_pre(*args, **kwargs) if previous_pre is not None else None
            # A hook that returns True tells Triton not to compile: nothing to time.
            if not result:
                self._started.append(time.perf_counter())
                self._hit = False
                self._warmup_begins()
            return result

        def post(*args, **kwargs):
            if self._started:
                ms = (time.perf_counter() - self._started.pop()) * 1e3
                self._ms += ms
                self._count += 1
                if self._hit:
                    self._cached_ms += ms
                    self._cached_count += 1
                    self._hit = False
                self._warmup_ends()
            if previous_post is not None:
                return previous_post(*args, **kwargs)
            return None

        runtime.jit_cache_hook = pre
        runtime.jit_post_compile_hook = post

    def take(self):
        """Compile milliseconds and kernels compiled since the last take, or
        (None, None) when compile time is not measured; a Taken, whose
        cached_ms and cached_count say what of it the disk cache served."""
        if self.installed is None:
            return Taken(None, None)
        taken = Taken(self._ms, self._count, *((self._cached_ms, self._cached_count) if self.hits_known else ()))
        self._ms, self._count, self._cached_ms, self._cached_count = 0.0, 0, 0.0, 0
        # A compilation that raised never reached the post hook.
        self._started.clear()
        self._hit = False
        while self._warming:
            self._warmup_ends()
        return taken
