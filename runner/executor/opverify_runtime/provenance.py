"""Where each Triton kernel launched during a forward came from (docs/EXECUTOR.md, "Runtime
evidence with libraries").

A library's kernels are not only the `@triton.jit` functions its modules hold as attributes:
they sit behind wrappers of its own (autotuners, launch caches that keep compiled kernels and
launch them directly, heuristics), come out of decorators and code generators, and some are
written at run time into a cache folder and imported from there (FlagGems' pointwise code
generator). So the evidence does not scan modules for kernels; it watches the launches.
Triton calls `knobs.runtime.launch_enter_hook` (a hook chain in Triton 3.5 and later, a plain
callable before; `CompiledKernel.launch_enter_hook` in older releases) from every launch, with
the kernel's name, on the Python stack of whoever launched it. For each launch the recorder
takes the kernel's defining file (the JITFunction's function, found in the launching frames)
and the frames outward from the launch, and decides its origin:

* defined in the implementation's own file: `implementation`;
* defined in a declared package: `library`, whoever launched it;
* defined in another importable module (another package, torch's own): `foreign`;
* defined in a file outside every import folder (a module written at run time and imported by
  path) or not found at all: by who launched it. Walking outward from the launch past Triton's
  own frames and other generated files, the first frame in a declared package makes it
  `library-generated`, one in the implementation's file `implementation`, any other frame
  (torch's compiler, another package) `foreign`.

Whatever a library generates must still be launched by the library; a kernel of another
package stays foreign even when the library launches it.
"""
import os
import sys

IMPLEMENTATION, LIBRARY, GENERATED, FOREIGN = "implementation", "library", "library-generated", "foreign"
OWN_ORIGINS = (IMPLEMENTATION, LIBRARY, GENERATED)
LIBRARY_ORIGINS = (LIBRARY, GENERATED)

_MAX_FRAMES = 96  # a launch is never deeper than this below the code that asked for it


def _real(path):
    return os.path.realpath(os.path.abspath(path))


def _under(path, folder):
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class Provenance:
    """Places files: the implementation's own, the declared packages', Triton's (transparent:
    its launch path), importable modules of anything else, and generated ones (outside every
    import folder, or compiled from a string)."""

    def __init__(self, own_files=(), library_folders=(), transparent=(), import_folders=None):
        self.own_files = {_real(f) for f in own_files if f and not f.startswith("<")}
        self.library_folders = tuple(_real(f) for f in library_folders)
        self.transparent = tuple(_real(f) for f in transparent)
        folders = sys.path if import_folders is None else import_folders
        # '' (the working folder) is left out: a library may write its generated code under it
        self.import_folders = tuple(_real(f) for f in folders if f not in ("", "."))
        self._places = {}

    def place(self, filename):
        """"own", "library", "transparent", "generated" or "foreign"."""
        found = self._places.get(filename)
        if found is None:
            found = self._places[filename] = self._place(filename)
        return found

    def _place(self, filename):
        if not filename or filename.startswith("<"):
            return "generated"  # exec'd source: "<string>", a code generator's own name
        path = _real(filename)
        if path in self.own_files:
            return "own"
        if any(_under(path, f) for f in self.library_folders):
            return "library"
        if any(_under(path, f) for f in self.transparent):
            return "transparent"
        if any(_under(path, f) for f in self.import_folders):
            return "foreign"
        return "generated"

    def origin(self, defined_in, frames):
        """(origin, via): `frames` are (file, line, function) from the launch outward; `via` is
        the frame that decided a generated kernel's origin, as "file:line (function)"."""
        where = self.place(defined_in) if defined_in else "generated"
        if where == "own":
            return IMPLEMENTATION, None
        if where == "library":
            return LIBRARY, None
        if where in ("foreign", "transparent"):
            return FOREIGN, None
        for filename, line, function in frames:
            place = self.place(filename)
            if place in ("transparent", "generated"):
                continue
            via = f"{filename}:{line} ({function})"
            return {"library": GENERATED, "own": IMPLEMENTATION}.get(place, FOREIGN), via
        return FOREIGN, None


def package_folders(module):
    """The folders (or file) a module's code lives in."""
    if module is None:
        return []
    paths = list(getattr(module, "__path__", None) or [])
    if not paths and getattr(module, "__file__", None):
        paths = [module.__file__]
    return [p for p in paths if p]


def _jit_function(value):
    """The JITFunction a launching frame's `self` stands for: a JITFunction itself (its run), or
    a compiled kernel whose source is one (a launch cache that keeps compiled kernels)."""
    for _ in range(2):
        if value is None:
            return None
        if type(value).__name__ in ("JITFunction", "InterpretedFunction") and hasattr(value, "fn"):
            return value
        value = getattr(getattr(value, "src", None), "fn", None)
    return None


def launch_site(frame):
    """(JITFunction or None, [(file, line, function), ...]) from a launch's innermost Python frame
    outward."""
    jit, frames = None, []
    while frame is not None and len(frames) < _MAX_FRAMES:
        code = frame.f_code
        frames.append((code.co_filename, frame.f_lineno, code.co_name))
        if jit is None and "self" in code.co_varnames + code.co_freevars:
            jit = _jit_function(frame.f_locals.get("self"))
        frame = frame.f_back
    return jit, frames


def kernel_name(metadata, jit):
    """The launched kernel's name, as the profiler shows it (the compiled function's name)."""
    data = getattr(metadata, "data", None)
    if isinstance(data, dict) and data.get("name"):
        return str(data["name"])
    if isinstance(metadata, dict) and metadata.get("name"):
        return str(metadata["name"])
    fn = getattr(jit, "fn", None)
    return getattr(fn, "__name__", None) or "<unnamed Triton kernel>"


def hashable(value):
    try:
        hash(value)
    except TypeError:
        return False
    return True


def kernel_handle(metadata):
    """The launched compiled kernel's function handle from its launch metadata, or None."""
    data = getattr(metadata, "data", metadata)
    handle = data.get("function") if isinstance(data, dict) else None
    return handle if hashable(handle) else None


class LaunchRecorder:
    """While inside, records every Triton launch: {kernel name: {launches, origins, defined_in,
    via}}, and the JITFunctions and compiled kernels' function handles (for ghost replay). `active` is False where the installed Triton
    has no launch hook (or none is imported): the caller falls back to a static scan."""

    def __init__(self, provenance):
        self.provenance = provenance
        self.launches = {}
        self.jit_functions = {}
        self.functions = {}  # kernel name -> the compiled kernels' function handles launched (ghost replay)
        self.active = False
        self._undo = None

    def record(self, metadata, frame):
        jit, frames = launch_site(frame)
        name = kernel_name(metadata, jit)
        defined_in = getattr(getattr(getattr(jit, "fn", None), "__code__", None), "co_filename", None)
        origin, via = self.provenance.origin(defined_in, frames)
        entry = self.launches.setdefault(name, {"launches": 0, "origins": {}, "defined_in": defined_in, "via": via})
        entry["launches"] += 1
        entry["origins"][origin] = entry["origins"].get(origin, 0) + 1
        if entry["via"] is None:
            entry["via"] = via
        if jit is not None:
            self.jit_functions.setdefault(name, jit)
        handle = kernel_handle(metadata)
        if handle is not None:
            self.functions.setdefault(name, set()).add(handle)

    def _hook(self, metadata=None, *args, **kwargs):
        # Called from inside Triton's launcher: whatever goes wrong here must not fail the launch.
        try:
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename == __file__:  # our own chaining
                frame = frame.f_back
            self.record(metadata, frame)
        except Exception as error:  # noqa: BLE001 - recorded, shown in the report, never raised
            name = kernel_name(metadata, None)
            entry = self.launches.setdefault(name, {"launches": 0, "origins": {}, "defined_in": None, "via": None})
            entry["launches"] += 1
            entry["origins"]["unknown"] = entry["origins"].get("unknown", 0) + 1
            entry["error"] = f"{type(error).__name__}: {error}"

    def __enter__(self):
        self._undo = install_launch_hook(self._hook)
        self.active = self._undo is not None
        return self

    def __exit__(self, *exc):
        if self._undo is not None:
            self._undo()
            self._undo = None
        return False

    def names(self, origins):
        """Kernel names every launch of which had one of `origins` (a name launched from two
        places, one of them not allowed, is not counted: its time cannot be split)."""
        return {name for name, entry in self.launches.items() if set(entry["origins"]) <= set(origins)}

    def report(self):
        return {name: {"launches": e["launches"], "origins": dict(sorted(e["origins"].items())),
                       "defined_in": e["defined_in"], **({"via": e["via"]} if e["via"] else {}),
                       **({"error": e["error"]} if e.get("error") else {})}
                for name, e in sorted(self.launches.items())}


def install_launch_hook(hook):
    """Adds `hook` to Triton's launch-enter hook; returns a function that takes it out again, or
    None where the imported Triton has none (or Triton is not imported)."""
    triton = sys.modules.get("triton")
    if triton is None:
        return None
    runtime = getattr(getattr(triton, "knobs", None), "runtime", None)
    chain = getattr(runtime, "launch_enter_hook", None) if runtime is not None else None
    if chain is not None and callable(getattr(chain, "add", None)) and callable(getattr(chain, "remove", None)):
        chain.add(hook)
        return lambda: chain.remove(hook)
    owner, attribute = None, "launch_enter_hook"
    if runtime is not None and hasattr(runtime, attribute):
        owner = runtime
    else:
        compiled = getattr(getattr(triton, "compiler", None), "CompiledKernel", None)
        if compiled is not None and hasattr(compiled, attribute):
            owner = compiled
    if owner is None:
        return None
    previous = getattr(owner, attribute)

    def chained(*args, **kwargs):
        if previous is not None:
            previous(*args, **kwargs)
        hook(*args, **kwargs)

    setattr(owner, attribute, chained)
    return lambda: setattr(owner, attribute, previous)


def listed(names, shown=4):
    """"a, b, c, d and 994 more": a list a person can read, however long."""
    names = list(names)
    if len(names) <= shown + 1:
        return ", ".join(names)
    return ", ".join(names[:shown]) + f" and {len(names) - shown} more"
