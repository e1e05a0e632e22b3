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
"""
import sys
import time


class CompileClock:
    def __init__(self):
        self.installed = None      # "jit_hooks", "listener", or None
        self._started = []         # start times of compilations in flight
        self._ms = 0.0
        self._count = 0

    def install(self):
        """Hooks into Triton once it has been imported (by an implementation).
        Returns whether compile time is measured."""
        if self.installed is not None:
            return True
        triton = sys.modules.get("triton")
        knobs = getattr(triton, "knobs", None) if triton is not None else None
        runtime = getattr(knobs, "runtime", None)
        if runtime is not None and hasattr(runtime, "jit_cache_hook") and hasattr(runtime, "jit_post_compile_hook"):
            self._chain(runtime)
            self.installed = "jit_hooks"
            return True
        compilation = getattr(knobs, "compilation", None)
        if compilation is not None and hasattr(compilation, "listener"):
            previous = compilation.listener

            def listener(*args, **kwargs):
                times = kwargs.get("times")
                total = getattr(times, "total", None)
                if total is not None:
                    self._ms += total / 1e3
                self._count += 1
                if previous is not None:
                    previous(*args, **kwargs)

            compilation.listener = listener
            self.installed = "listener"
            return True
        return False

    def _chain(self, runtime):
        previous_pre = runtime.jit_cache_hook
        previous_post = runtime.jit_post_compile_hook

        def pre(*args, **kwargs):
            result = previous_pre(*args, **kwargs) if previous_pre is not None else None
            # A hook that returns True tells Triton not to compile: nothing to time.
            if not result:
                self._started.append(time.perf_counter())
            return result

        def post(*args, **kwargs):
            if self._started:
                self._ms += (time.perf_counter() - self._started.pop()) * 1e3
                self._count += 1
            if previous_post is not None:
                return previous_post(*args, **kwargs)
            return None

        runtime.jit_cache_hook = pre
        runtime.jit_post_compile_hook = post

    def take(self):
        """Compile milliseconds and kernels compiled since the last take, or
        (None, None) when compile time is not measured."""
        if self.installed is None:
            return None, None
        ms, count = self._ms, self._count
        self._ms, self._count = 0.0, 0
        # A compilation that raised never reached the post hook.
        self._started.clear()
        return ms, count
