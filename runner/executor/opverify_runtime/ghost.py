"""Ghost replay (opt-in, cuda): ModelNew.forward again with every own kernel's launch made a
no-op, on poisoned memory; outputs that come back bit for bit were not made by the kernels
(executor.py's _ghost_replay judges them). Here: making the own launches no-ops, whatever path
they take to Triton's launcher, and undoing it."""
import contextlib
import sys

from .provenance import hashable, install_launch_hook, kernel_name


def _launcher_class():
    """Triton's launcher class (driver.active.launcher_cls): every launch, through
    JITFunction.run or a compiled kernel a library's launch cache keeps, ends in its __call__
    with the launch metadata (the kernel's name) as its seventh argument. None if absent."""
    driver = getattr(getattr(getattr(sys.modules.get("triton"), "runtime", None), "driver", None), "driver", None)
    try:
        launcher = getattr(getattr(driver, "active", None), "launcher_cls", None)
    except Exception:  # noqa: BLE001 - no usable driver: the fallback below
        return None
    return launcher if isinstance(launcher, type) and callable(getattr(launcher, "__call__", None)) else None


def _no_hook(*args, **kwargs):
    """A launch-enter hook that does nothing: while one is registered, Triton builds each
    launch's metadata (the kernel's name)."""


def compiled_handles(jit_functions):
    """The function handles of the kernels these JITFunctions compiled and keep (Triton 3.x's
    `device_caches`, {device: (kernel_cache, ...)}; older releases' `cache`, {device: {key:
    kernel}}), as far as they are loaded; never compiles or loads anything."""
    handles = set()
    for jit in jit_functions:
        for caches in (getattr(jit, "device_caches", None), getattr(jit, "cache", None)):
            if not isinstance(caches, dict):
                continue
            for per_device in list(caches.values()):
                kernels = per_device[0] if isinstance(per_device, tuple) and per_device else per_device
                if not isinstance(kernels, dict):
                    continue
                for kernel in list(kernels.values()):
                    handle = getattr(kernel, "__dict__", {}).get("function")
                    if handle is not None and hashable(handle):
                        handles.add(handle)
    return handles


@contextlib.contextmanager
def ghost_kernels(own, functions=(), names=()):
    """Every own kernel's launch a no-op while inside; restored after. `own`: {name:
    JITFunction}; `functions`: the function handles the own kernels' launches were seen with;
    `names`: more own kernel names (launched through a library's launch cache, with no
    JITFunction in sight).
    Where Triton's launcher class can be patched, the own launches are skipped there (a
    library's launch cache that keeps compiled kernels is covered too, and whatever it caches
    stays a real kernel); else each JITFunction's run is replaced. A launch is known as own by
    its compiled kernel's function handle (every launch passes it; the handles seen, and those
    of the kernels the own JITFunctions compiled) or by the name in its launch metadata (which
    Triton builds only while a launch-enter hook is registered: one that does nothing is, while
    inside)."""
    launcher = _launcher_class()
    if launcher is not None:
        names = set(own) | set(names)
        handles = set(functions) | compiled_handles(own.values())
        handles.discard(None)
        original = launcher.__dict__.get("__call__")

        def call(self, *args, **kwargs):
            if len(args) > 4 and hashable(args[4]) and args[4] in handles:
                return None
            if len(args) > 6 and kernel_name(args[6], None) in names:
                return None
            return launcher_call(self, *args, **kwargs)

        launcher_call = launcher.__call__
        launcher.__call__ = call
        undo_hook = install_launch_hook(_no_hook)
        try:
            yield
        finally:
            if undo_hook is not None:
                undo_hook()
            if original is None:
                del launcher.__call__
            else:
                launcher.__call__ = original
        return
    patched = []
    try:
        for kernel in own.values():
            patched.append((kernel, kernel.__dict__.get("run")))
            kernel.run = lambda *args, **kwargs: None
        yield
    finally:
        for kernel, original in patched:
            if original is None:
                kernel.__dict__.pop("run", None)
            else:
                kernel.run = original
