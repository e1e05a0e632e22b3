"""Ghost replay (opt-in, cuda): ModelNew.forward again with every own kernel's launch made a
no-op, on poisoned memory; outputs that come back bit for bit were not made by the kernels
(executor.py's _ghost_replay judges them). Here: making the own launches no-ops, whatever path
they take to Triton's launcher, and undoing it."""
import contextlib
import sys

from .provenance import hashable, install_launch_hook, kernel_handle, kernel_name


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python, whose attributes can be set


def _has_call(cls):
    """A class of Python's own making that defines __call__ (a launcher class, not `function`)."""
    return (isinstance(cls, type) and bool(cls.__flags__ & _HEAP_TYPE)
            and any("__call__" in vars(k) for k in cls.__mro__ if k is not object))


def launcher_classes(jit_functions=()):
    """Triton's launcher classes: every launch, through JITFunction.run or a compiled kernel a
    library's launch cache keeps, ends in a launcher's __call__ with the compiled function's
    handle as its fifth argument and the launch metadata (the kernel's name) as its seventh.
    Found two ways, since where the driver lives has moved between Triton releases: the class
    of each launcher the own JITFunctions' compiled kernels hold (what their launches call),
    and the active driver's launcher_cls (`triton.runtime.driver` the module with its `driver`,
    or the driver config itself)."""
    found = []
    for kernel in compiled_kernels(jit_functions):
        attributes = getattr(kernel, "__dict__", {})
        launcher = attributes.get("_run", attributes.get("run"))
        if launcher is not None and _has_call(type(launcher)) and type(launcher) not in found:
            found.append(type(launcher))
    config = getattr(getattr(sys.modules.get("triton"), "runtime", None), "driver", None)
    for holder in (config, getattr(config, "driver", None)):
        try:
            launcher = getattr(getattr(holder, "active", None), "launcher_cls", None)
        except Exception:  # noqa: BLE001 - no usable driver there
            continue
        if _has_call(launcher) and launcher not in found:
            found.append(launcher)
    return found


def compiled_kernels(jit_functions):
    """The compiled kernels these JITFunctions keep (Triton 3.x's `device_caches`, {device:
    (kernel_cache, ...)}; older releases' `cache`, {device: {key: kernel}}), as far as they are
    loaded; never compiles or loads anything."""
    for jit in jit_functions:
        for caches in (getattr(jit, "device_caches", None), getattr(jit, "cache", None)):
            if not isinstance(caches, dict):
                continue
            for per_device in list(caches.values()):
                kernels = per_device[0] if isinstance(per_device, tuple) and per_device else per_device
                if isinstance(kernels, dict):
                    yield from list(kernels.values())


def compiled_handles(jit_functions):
    """The function handles of the kernels these JITFunctions compiled and keep."""
    handles = set()
    for kernel in compiled_kernels(jit_functions):
        handle = getattr(kernel, "__dict__", {}).get("function")
        if handle is not None and hashable(handle):
            handles.add(handle)
    return handles


@contextlib.contextmanager
def ghost_kernels(own, functions=(), names=()):
    """Every own kernel's launch a no-op while inside; restored after. `own`: {name:
    JITFunction}; `functions`: the function handles the own kernels' launches were seen with;
    `names`: more own kernel names (launched through a library's launch cache, with no
    JITFunction in sight). Yields a Replay: how many own launches it skipped, and the names
    of those the no-ops missed, which the replay's launch hook stopped.
    The own launches are skipped at each of Triton's launcher classes (launcher_classes), so a
    library's launch cache that keeps compiled kernels is covered too, and whatever it caches
    stays a real kernel; with no launcher class found, each own JITFunction's run is replaced
    instead (a launch cache's compiled kernels then get through). A launch is known as own by
    its compiled kernel's function handle (every launch passes it; the handles seen, and those
    of the kernels the own JITFunctions compiled) or by the name in its launch metadata (which
    Triton builds only while a launch-enter hook is registered: the replay's own hook).
    An own launch the no-ops miss (a launcher reached some other way) still calls that hook
    before it launches, and the hook raises GhostStop: Triton's launchers call the hook first
    and launch nothing when it raises, so the kernel does not run either way."""
    names = set(own) | set(names)
    handles = set(functions) | compiled_handles(own.values())
    handles.discard(None)
    replay = Replay()

    def is_own(handle, name):
        return (hashable(handle) and handle in handles) or name in names

    def watch(metadata, *args, **kwargs):
        name = kernel_name(metadata, None)
        if is_own(kernel_handle(metadata), name):
            replay.stopped.append(name)
            raise GhostStop(name)

    patched = []  # (owner, attribute, the owner's own value or _ABSENT)
    launchers = launcher_classes(own.values())
    try:
        for launcher in launchers:
            launcher_call = launcher.__call__

            def call(self, *args, _launch=launcher_call, **kwargs):
                if len(args) > 4 and is_own(args[4], kernel_name(args[6], None) if len(args) > 6 else None):
                    replay.skipped += 1
                    return None
                return _launch(self, *args, **kwargs)

            patched.append((launcher, "__call__", launcher.__dict__.get("__call__", _ABSENT)))
            launcher.__call__ = call
        for kernel in () if launchers else own.values():
            patched.append((kernel, "run", kernel.__dict__.get("run", _ABSENT)))
            kernel.run = replay.skip
        undo_hook = install_launch_hook(watch)
        try:
            yield replay
        finally:
            if undo_hook is not None:
                undo_hook()
    finally:
        for owner, attribute, value in reversed(patched):
            if value is _ABSENT:
                delattr(owner, attribute)
            else:
                setattr(owner, attribute, value)


_ABSENT = object()


class GhostStop(BaseException):  # noqa: N818 - a stop, not an error; BaseException: `except Exception` lets it by
    """Raised by the replay's launch hook for an own launch the no-ops missed: the launch is
    not made (Triton's launchers call the hook first and launch nothing when it raises)."""


class Replay:
    """What a replay did: `skipped` own launches at the launcher classes, and the names of own
    launches the no-ops missed and the launch hook `stopped`."""

    def __init__(self):
        self.skipped = 0
        self.stopped = []

    def skip(self, *args, **kwargs):
        """An own JITFunction's run during the replay: nothing launched."""
        self.skipped += 1
