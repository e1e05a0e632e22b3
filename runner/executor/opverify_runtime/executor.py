"""The operator side of the executor process: everything that runs a task's
Model and an implementation's ModelNew. The C++ executor (runner/executor/
executor_main.cc) calls Session.handle_json for each request and ships the
returned tensors to its parent as raw bytes.

Requests (JSON objects, "op" picks the op_<name> handler; the C++ side's
structs are in runner/executor/protocol.h, and tests/unit/protocol_test.cc
checks this list, its order and its fields against them):
  load           {task_file, impl_file, backend, seed, golden_precision, params?: [dict, ...],
                  edge_cases, runtime_checks, ghost_replay, library, python_path, override?,
                  reference_as_impl?, allow_torch?, role}
  describe_cases {}          (input_desc of every case, for an operator that cannot run)
  run_case       {index, seed, probe, check_determinism, evidence, golden_sizes?, reference_writes?}
  environment    {}
  lint           {file, non_compute, library, python_path, entries?, overrides?, allow_torch?}
  bench_prepare  {index, seed, warmup, flush_l2, skip_framework}
  bench_measure  {side: framework|implementation, repeats, adaptive, max_repeats?,
                  rse_target, max_seconds, profile_iterations}
  bench_release  {}
  bench_transfer {nbytes}   (benchmarks only)
  ping           {}
A load's role (docs/SECURITY.md, "The trust boundary"): "reference" imports
the task alone and its run_case ships the goldens; "implementation" imports
the implementation too, seals the runtime first (runtime_seal.h) and its
run_case ships the actuals alone; "both" ships golden, actual per output.
Every reply has "ok"; failures carry "error_type", "error_msg" and
"device_poisoned" (the device cannot serve another case), and what
the request had established before it failed: a load's case_count once the
task's cases are counted, a case's input_desc and input_dtypes once its
inputs are built.
"""
import contextlib
import errno as errno_module
import gc
import json
import os
import re
import sys
import time
import types

try:
    import opverify_seal as runtime_seal  # the C++ executor's (runtime_seal.h)
except ImportError:  # imported outside opverify-executor (tests, tools): nothing to seal
    runtime_seal = None

from . import backend as backend_module
from . import allowances, bench, edge_cases, environment, ghost, guard, override, probe, runtime_evidence
from .bench_requests import BenchRequests
from .case_io import (CaseError, clone_to, describe, describe_inputs, flatten_outputs, import_file, input_changes,
                      input_digest, input_dtypes, input_tensors, kept_inputs_digest, materialized, refuse_oversized,
                      same_bits, seed_everything)
from .compile_clock import CompileClock

# What the sandbox (docs/SECURITY.md) answers an implementation that tries to
# write outside its scratch folder or reach the network: nothing else here
# gives these errors, since the filesystem is read-only and the network
# namespace empty only because of it.
_REFUSALS = {
    errno_module.EROFS: "a write outside the scratch folder",
    errno_module.ENETUNREACH: "a network connection",
    errno_module.EHOSTUNREACH: "a network connection",
    errno_module.ECONNREFUSED: "a network connection",
    errno_module.EADDRNOTAVAIL: "a network connection",
}


# What the sandbox's memory limits answer (RLIMIT_AS and RLIMIT_DATA, the
# file-size limit, the sized /dev/shm): OutOfMemory, like a MemoryError.
_LIMITS = {
    errno_module.ENOMEM: "the memory limit",
    errno_module.EFBIG: "the file-size limit (the memory limit)",
    errno_module.ENOSPC: "the size of /dev/shm or of a disk",
}


def sandbox_refusal(error, answers=_REFUSALS):
    """What the sandbox refused, if `error` (or an error it came from) is its answer; else None."""
    if os.environ.get("OPVERIFY_SANDBOX") not in ("bwrap", "unshare"):
        return None
    seen = set()
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        if isinstance(error, OSError) and error.errno in answers:
            return answers[error.errno]
        error = error.__cause__ or error.__context__
    return None


_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def _preload_torch():
    """Imports torch as the process starts, before any request: every load
    imports it first anyway, and a spare executor (docs/PERFORMANCE.md) pays
    for it while the previous operator runs. No device is touched (torch
    initialises CUDA lazily). Milliseconds it took; a torch that cannot be
    imported is left to the load, whose reply says why."""
    started = time.perf_counter()
    try:
        import torch  # noqa: F401
    except Exception:  # noqa: BLE001 - the load's own import reports it
        pass
    return round((time.perf_counter() - started) * 1e3, 1)


class _Phases:
    """Each phase's wall time (ms) into `timings`, less the Triton
    compilation inside it, which is summed apart."""

    def __init__(self, compile_clock, timings):
        self.compile_clock = compile_clock
        self.timings = timings
        self.compile_ms, self.kernels = 0.0, 0
        self.cached_ms, self.kernels_cached = 0.0, 0  # served by Triton's disk cache

    def record(self, name, since):
        taken = self.compile_clock.take()
        ms, count = taken
        wall = (time.perf_counter() - since) * 1e3
        if ms is None:
            self.timings[name] = wall
            return
        self.compile_ms, self.kernels = self.compile_ms + ms, self.kernels + count
        if taken.cached_ms is not None:
            self.cached_ms, self.kernels_cached = self.cached_ms + taken.cached_ms, self.kernels_cached + taken.cached_count
        self.timings[name] = max(0.0, wall - ms)


class _Watched:
    """The runtime evidence's recorders of one forward: the profile, the
    dispatch trace, the Triton launches (None where not watched), what the
    library's registered kernels ran (override.traced_registrations), and
    whether every output is one of the forward's own input tensors, returned
    as it came (`outputs_are_inputs`)."""

    def __init__(self):
        self.prof = self.trace = self.launches = None
        self.inside = {}
        self.outputs_are_inputs = False


class Session(BenchRequests):
    def __init__(self):
        self.torch = None
        self.backend = None
        self.task = None
        self.impl = None
        self.cases = []        # per case: parameters (dict) or None
        self._groups_by_seed = {}  # seed -> the task's own cases made with it
        self.edges = {}  # case index -> (label, laced): the generated edge cases
        self.init_inputs = []
        self.load_seed = 0
        self.golden_precision = "native"
        self.runtime_checks = self.ghost_replay = self.watch_reach = self.hook_checks = False
        self._hooks_before = None  # torch's global module hooks before any library was imported
        self.own_kernels = {}
        self.own_functions = set()  # the own kernels' function handles seen launched (ghost replay)
        self.own_names = set()      # and their names, JITFunction or not
        self.library = []      # packages whose kernels count as the implementation's own
        self.override = None   # a dispatch-override operator's entry
        self.compile_clock = CompileClock()
        self._known = {}  # what a request established before it failed: its error reply says it too
        # Where this process's start went (milliseconds; executor_main.cc adds
        # the interpreter's and the runtime's share): the load and ping replies say it.
        self.startup = {"torch_ms": _preload_torch()}
        self._loads = 0        # loads answered: the first keeps the identities taken before any library
        self._preloaded = None  # what preload() imported: {library, modules, python_path, error?}
        self._identities = None

    def preload(self):
        """A spare implementation executor's head start (OPVERIFY_PRELOAD, set by
        the rank: OperatorSession::StartOptions; docs/PERFORMANCE.md): the
        declared library's modules imported as the process starts, before it is
        handed an operator, where the load would import them anyway. What the
        load does before an implementation's import is done first, so nothing
        is checked later than before: torch's identities taken and the runtime
        sealed (runtime_seal.h) before any library code runs. A module that
        does not import is the load's ImportError, as import_library says it.
        Called once by executor_main.cc, before the first request."""
        wanted = os.environ.get("OPVERIFY_PRELOAD")
        if not wanted:
            return
        started = time.perf_counter()
        try:
            spec = json.loads(wanted)
            self._preloaded = {key: [str(item) for item in spec.get(key) or []]
                               for key in ("library", "modules", "python_path")}
        except (ValueError, AttributeError, TypeError) as error:
            self._preloaded = {"library": [], "modules": [], "python_path": [],
                               "error": CaseError("RuntimeError", f"executor: OPVERIFY_PRELOAD is unreadable: {error}")}
            return
        try:
            import torch
            self.torch = torch
            self._identities = self._torch_identities()
            self._hooks_before = guard.global_module_hooks(torch)
            from . import lint  # noqa: F401 - imported to be sealed, as _load_implementation does
            if runtime_seal is not None:
                runtime_seal.seal()
        except BaseException as error:  # noqa: BLE001 - the load says it; the process must come up
            self._preloaded["error"] = CaseError("RuntimeError", "executor: preload: " + describe(error))
            return
        for folder in reversed(self._preloaded["python_path"]):
            if folder not in sys.path:
                sys.path.insert(0, folder)
        library = self._preloaded["library"]
        try:
            runtime_evidence.import_library(
                self._preloaded["modules"],
                declared_with=lambda name: "library/--library" if name in library else "preload")
        except CaseError as error:
            self._preloaded["error"] = error
        self.startup["preload_ms"] = round((time.perf_counter() - started) * 1e3, 1)
        self.startup["preloaded"] = self._preloaded["modules"]

    def _check_preloaded(self, request):
        """A preloaded executor serves only an implementation's load with the
        library and import path it was preloaded for (the rank keys spares by
        it: anything else is a bug of ours, refused)."""
        if self._preloaded is None:
            return
        library = list(request.get("library") or [])
        covered = all(any(name == package or name.startswith(package + ".") for package in library)
                      for name in self._preloaded["modules"])
        if (self.role != "implementation" or list(request.get("python_path") or []) != self._preloaded["python_path"]
                or not covered):
            raise CaseError("RuntimeError", f"executor: preloaded {self._preloaded['modules']} for an "
                            f"implementation of library {self._preloaded['library']}, asked to load a "
                            f"{self.role} of library {library}")

    # -- protocol ---------------------------------------------------------
    def handle_json(self, text):
        """Returns (reply JSON text, list of CPU tensors to ship)."""
        request = json.loads(text)
        tensors = []
        self._known = {}
        try:
            handler = getattr(self, "op_" + request.get("op", ""), None)
            if handler is None:
                raise CaseError("RuntimeError", f"unknown request {request.get('op')!r}")
            reply, tensors = handler(request)
            reply["ok"] = True
        except CaseError as error:
            reply = {**self._known, "ok": False, "error_type": error.error_type, "error_msg": str(error),
                     "device_poisoned": error.device_poisoned, **error.extra}
        except BaseException as error:  # noqa: BLE001 - a bug of ours must become a reply, not a death
            reply = {**self._known, "ok": False, "error_type": "RuntimeError",
                     "error_msg": "executor: " + describe(error), "device_poisoned": False}
        sys.stdout.flush()
        sys.stderr.flush()
        # Text from operator code may hold lone surrogates (raise RuntimeError('\ud800')),
        # which no UTF-8 reader accepts: each becomes U+FFFD, the rest stays as it is.
        text = _LONE_SURROGATE.sub("\ufffd", json.dumps(reply, ensure_ascii=False))
        return text, [materialized(t) for t in tensors]

    # -- requests ---------------------------------------------------------
    def _torch_identities(self):
        """What a cheating operator might replace: torch's functions, F.*,
        Tensor methods, torch.cuda's, the timers; name -> object identity."""
        import time as time_module
        torch = self.torch
        identities = {}
        for label, namespace in (("torch", torch), ("F", torch.nn.functional), ("Tensor", torch.Tensor),
                                 ("cuda", torch.cuda), ("time", time_module)):
            for name, value in list(vars(namespace).items()):
                if callable(value) and not isinstance(value, type(torch)):
                    identities[f"{label}.{name}"] = id(value)
        return identities

    def _tainted(self):
        """Names whose object changed since the first operator loaded. New
        names (submodules imported lazily, CUDA's late initialisation) are
        not a change."""
        now = self._torch_identities()
        return sorted(name for name, identity in self._identities.items() if now.get(name) != identity)

    def op_load(self, request):
        import torch
        self.torch = torch
        self._check_untainted()
        self._read_load_settings(request, torch)
        self._check_preloaded(request)
        # The task and its cases first: an implementation that fails to import
        # fails every case, and the error reply says how many there are.
        self._load_task(request, torch)
        if self.role == "reference":
            return dict(self._known, startup=self.startup), []  # no implementation, no library: nothing it could reach
        self._load_implementation(request, torch)
        if self.compile_clock.install():
            self.compile_clock.take()  # what importing compiled is not a case's
        return dict(self._known, startup=self.startup), []

    def _check_untainted(self):
        """The first load records torch's identities (a preloaded executor's
        were taken before its library was imported); a later one refuses a
        process whose earlier operator replaced any (ExecutorTainted)."""
        self._loads += 1
        if self._loads == 1:
            if self._identities is None:
                self._identities = self._torch_identities()
            if self._hooks_before is None:
                self._hooks_before = guard.global_module_hooks(self.torch)
            return
        changed = self._tainted()
        if changed:
            raise CaseError("ExecutorTainted", "an earlier operator replaced " + ", ".join(changed[:10]))

    def _read_load_settings(self, request, torch):
        """The load request's backend, role, seed, golden precision, import
        path, library, allowances and override; the last operator's task and
        implementation forgotten."""
        try:
            self.backend = backend_module.select(torch, request.get("backend", "auto"))
        except RuntimeError as error:
            raise CaseError("DeviceError", str(error)) from error
        # The trust boundary (docs/SECURITY.md): a "reference" executor imports
        # the task alone and makes the golden; an "implementation" one imports
        # the implementation and never holds a golden; "both" is the old
        # single process (OPVERIFY_SHARED_GOLDEN=1, measurements only).
        self.role = request.get("role", "both")
        if self.role not in ("reference", "implementation", "both"):
            raise CaseError("RuntimeError", f"unknown role {self.role!r}")
        self.load_seed = int(request.get("seed", 0))
        self.golden_precision = request.get("golden_precision", "native")
        if self.golden_precision not in ("native", "fp64"):
            raise CaseError("RuntimeError", f"unknown golden_precision {self.golden_precision!r}")
        # A pooled executor's last operator must not answer for this one.
        self.task = self.impl = None
        self.cases = []
        for folder in reversed(request.get("python_path") or []):
            if folder not in sys.path:
                sys.path.insert(0, folder)
        self.library = list(request.get("library") or [])
        self.allow_torch = list(request.get("allow_torch") or [])  # declared exceptions (allowances.py)
        self.override = request.get("override")

    def _load_task(self, request, torch):
        """The task (or the override's), its init inputs and its cases, the
        generated edge cases among them; what the load reply says of them."""
        if self.override:
            self.task = override.build_task(self.override, torch)
        else:
            self.task = import_file(request["task_file"], "task")
        if not hasattr(self.task, "Model"):
            raise CaseError("ImportError", f"{self.task.__file__}: defines no class Model")
        seed_everything(self.load_seed, torch)
        get_init = getattr(self.task, "get_init_inputs", None)
        self.init_inputs = list(get_init()) if get_init else []
        params = request.get("params")
        self._groups_by_seed = {}
        if params:
            self.cases = list(params)
        else:
            self.cases = [None] * len(self._groups(self.load_seed))
        self.edges = {}
        generated = []
        if request.get("edge_cases"):
            for label, case_params, laced in edge_cases.generate(self.task, params):
                self.edges[len(self.cases)] = (label, laced)
                self.cases.append(case_params)
                generated.append({"label": label, "params": case_params})
        self._known = {"case_count": len(self.cases), "backend": self.backend.name, "edge_cases": generated,
                       "non_compute": bool(getattr(self.task, "NON_COMPUTE", False))}

    def _load_implementation(self, request, torch):
        """The runtime sealed, then the implementation imported (or the
        override's, or the reference itself for the trust check), and the
        runtime checks it gets."""
        reference_as_impl = bool(request.get("reference_as_impl"))
        # The runtime's code as it is now is what the C++ executor checks after
        # every request from here on (runtime_seal.h): an implementation that
        # replaces any of it fails RuntimeTampered. The lint's modules too.
        from . import lint  # noqa: F401 - imported to be sealed
        if runtime_seal is not None:
            runtime_seal.seal()
        if self._preloaded and self._preloaded.get("error"):
            raise self._preloaded["error"]  # the library's import failed as the process started
        if reference_as_impl:
            # The reference trust check: torch's own device run of the reference
            # is judged against the CPU golden; the implementation is not imported.
            impl = types.SimpleNamespace(ModelNew=self.task.Model, __file__=self.task.__file__)
        elif self.override:
            impl = override.build_impl(self.override, self.task, torch)
        else:
            impl = import_file(request["impl_file"], "impl")
        if not hasattr(impl, "ModelNew"):
            raise CaseError("ImportError", f"{impl.__file__}: defines no class ModelNew")
        runtime_evidence.import_library(self.library)
        self.impl = impl
        # Runtime evidence needs a device profile and Triton kernels: cuda only;
        # whether an override's library code runs at all is seen everywhere.
        on_cuda = self.backend.name == "cuda" and not reference_as_impl
        self.runtime_checks = bool(request.get("runtime_checks")) and on_cuda
        self.hook_checks = bool(request.get("runtime_checks"))  # any backend (_no_global_hooks)
        self.watch_reach = bool(request.get("runtime_checks")) and bool(self.override)
        self.ghost_replay = bool(request.get("ghost_replay")) and on_cuda
        self.own_kernels = runtime_evidence.own_kernels(self.impl, self.library) if on_cuda else {}
        self.own_functions, self.own_names = set(), set()

    def op_describe_cases(self, request):
        """input_desc of every case (made with the load seed), for the failures
        of an operator that cannot run (its implementation does not import or
        fails the lint); [] for a case whose inputs cannot be built."""
        if self.task is None or not self.cases:
            raise CaseError("RuntimeError", "describe_cases: no task loaded")
        described = []
        for index in range(len(self.cases)):
            try:
                described.append(describe_inputs(self.inputs_for(index, self.load_seed), self.torch))
            except Exception:  # noqa: BLE001 - that case's failure says what went wrong
                described.append([])
        return {"input_descs": described}, []

    def _groups(self, seed):
        """The task's own cases (get_input_groups(), else one get_inputs()),
        made once per seed: several seeds per case each get their own."""
        if seed not in self._groups_by_seed:
            seed_everything(seed, self.torch)
            if hasattr(self.task, "get_input_groups"):
                groups = [list(g) for g in self.task.get_input_groups()]
            else:
                groups = [list(self.task.get_inputs())]
            first = self._groups_by_seed.get(self.load_seed)
            if first is not None and len(groups) != len(first):
                raise CaseError("RuntimeError", f"get_input_groups() gave {len(groups)} cases for seed {seed}, "
                                f"{len(first)} for seed {self.load_seed}: the case count must not depend on "
                                "the seed")
            self._groups_by_seed[seed] = groups
        return self._groups_by_seed[seed]

    def inputs_for(self, index, seed):
        if self.cases[index] is None:
            return self._groups(seed)[index]
        seed_everything(seed, self.torch)
        inputs = list(self.task.get_inputs(**self.cases[index]))
        if self.edges.get(index, (None, False))[1]:
            edge_cases.lace(inputs, self.torch)
        return inputs

    def classify(self, error, stage):
        """The error type of what `stage` raised (docs/EXECUTOR.md's list)."""
        torch = self.torch
        name = type(error).__name__
        module = type(error).__module__ or ""
        if isinstance(error, CaseError):
            return error
        text = f"{stage}: {describe(error)}"
        refused = sandbox_refusal(error)
        if refused:
            return CaseError("SandboxViolation", f"{stage}: the sandbox refused {refused}: {describe(error)}")
        if "CompilationError" in name or ("triton" in module and "compil" in module):
            return CaseError("CompilationError", text)
        limit = sandbox_refusal(error, _LIMITS)
        if self.backend.is_out_of_memory(error) or limit:
            self.backend.empty_cache()
            return CaseError("OutOfMemory", text + (f" (the sandbox's limit: {limit})" if limit else ""))
        if self.backend.is_device_error(error) or not self.backend.healthy():
            return CaseError("DeviceError", text, device_poisoned=True)
        return CaseError("RuntimeError", text)

    def ours_if_out_of_memory(self, error, stage):
        """A ReferenceError when the task's own code (its inputs, its Model)
        ran out of memory: the limit is too small for the task, which is ours
        to fix, not the implementation's fault. None for any other error."""
        limit = sandbox_refusal(error, _LIMITS)
        if not (limit or self.backend.is_out_of_memory(error)):
            return None
        return CaseError("ReferenceError", f"the memory limit is too small for the reference: {stage} ran out of "
                         f"memory ({describe(error)}); raise --memory-limit (ours, not the implementation's)")

    def _reference(self, model, inputs, device, reply, vault):
        """Runs the reference on its own copy of the inputs (on the CPU, the
        seed's way; on the device only where the CPU run fails), puts its
        outputs in the vault and returns (the inputs it wrote into, how many
        outputs). Nothing of the golden is left in this frame or any other."""
        torch = self.torch
        with torch.no_grad():
            widened = self._widened_model(model) if self.golden_precision == "fp64" else None
            try:
                golden_args = clone_to(inputs, "cpu", torch)
                golden = model(*golden_args)
            except BaseException as error:  # noqa: BLE001 - only execution errors fall back
                reply["fallback_reason"] = f"{type(error).__name__}: {error}"
                reply["golden_device"] = str(device)
                print(f"golden on CPU failed, retrying on {device}: {reply['fallback_reason']}", file=sys.stderr)
                try:
                    model = model.to(device)
                    golden_args = clone_to(inputs, device, torch)
                    golden = model(*golden_args)
                    self.backend.synchronize()
                except BaseException as second:  # noqa: BLE001
                    raise self.ours_if_out_of_memory(second, "the reference Model") or \
                        CaseError("ReferenceError", "reference Model failed on CPU and on "
                                  f"{device} (the task's fault: its reference cannot run on its own inputs): "
                                  + describe(second)) from second
                if widened is not None:
                    widened = widened.to(device)
            by_reference = {entry.split(" ", 2)[1] for entry in input_changes(inputs, golden_args, torch)}
            try:
                native = flatten_outputs(golden, torch)
            except CaseError as error:
                # The task's fault, not the implementation's: said so, in a type of its own.
                raise CaseError("ReferenceError", f"the reference Model.forward returned {type(golden).__name__}"
                                f" ({error}): the task file must return a tensor or a tuple of tensors") from None
            judged = native
            if widened is not None:
                judged = self._fp64_golden(widened, inputs, native, reply["golden_device"])
                reply["golden_precision"] = "fp64"
            on_host = [t.cpu() for t in judged]
            # The host copies, then whatever still holds device memory of the
            # reference's (its outputs, its arguments), kept until the judge.
            vault.hide(on_host)
            vault.hide([t for t in native + judged + [t for _, t in input_tensors(golden_args, torch)]
                        if t.device.type != "cpu"])
            count = len(on_host)
            sizes = [t.numel() for t in on_host]
            del golden, golden_args, native, judged, on_host
        return by_reference, count, sizes

    def _ghost_replay(self, model_new, inputs, device, actual):
        """The forward again, every own kernel a no-op, on poisoned memory:
        outputs that come back bit for bit were not made by the kernels. An own launch the
        no-ops miss is stopped at the launch hook (ghost.GhostStop): a forward that lets that
        stop through changed; one that catches it and returns all the same is judged like any
        other. Raises GhostReplayUnchanged."""
        torch = self.torch
        if not (self.own_kernels or self.own_names):
            return
        args = clone_to(inputs, device, torch)
        self.backend.synchronize()
        gc.collect()  # device tensors only a reference cycle keeps are freed now, and poisoned below
        guard.poison_free_memory(torch, self.backend)
        # Outside the try: the no-ops failing to install is opverify's error, never a pass.
        with ghost.ghost_kernels(self.own_kernels, self.own_functions, self.own_names) as replay, \
                torch.no_grad():
            try:
                replayed = model_new(*args)
                self.backend.synchronize()
                replayed = [t.cpu() for t in flatten_outputs(replayed, torch)]
            except BaseException:  # noqa: BLE001 - failing without its kernels (GhostStop too) is changing
                return
        if len(replayed) == len(actual) and all(same_bits(g, a, torch) for g, a in zip(replayed, actual)):
            launched = sorted(self.own_names) or sorted(self.own_kernels)
            skipped = f"{replay.skipped} launch{'' if replay.skipped == 1 else 'es'} skipped"
            if replay.stopped:  # the hook stopped them, and the forward caught the stop
                skipped += (f", {len(replay.stopped)} stopped at the launch hook and the stop caught inside forward ("
                            + runtime_evidence.listed(sorted(set(replay.stopped))) + ")")
            raise CaseError("GhostReplayUnchanged", "ghost replay: with its @triton.jit kernels ("
                            + runtime_evidence.listed(launched) + f") made no-ops ({skipped}), ModelNew.forward "
                            "returned the same outputs bit for bit: the kernels do not make them")

    def _widened_model(self, model):
        """golden_precision fp64: a copy of the reference whose floating
        parameters and buffers are float64 (taken before it runs, so its state
        is the one the native run starts from)."""
        import copy
        try:
            return copy.deepcopy(model).to(self.torch.float64)
        except BaseException as error:  # noqa: BLE001
            raise CaseError("RuntimeError", "golden_precision fp64: cannot make a float64 copy of Model: "
                            + describe(error)) from error

    def _fp64_golden(self, widened, inputs, native, device):
        """The reference run on inputs widened to float64 (complex128), each
        output rounded once to the dtype the native run produced."""
        torch = self.torch

        def widen(value):
            if isinstance(value, torch.Tensor):
                value = value.detach().to(device, copy=True)
                if value.is_complex():
                    return value.to(torch.complex128)
                return value.to(torch.float64) if value.is_floating_point() else value
            if isinstance(value, (list, tuple)):
                return type(value)(widen(v) for v in value)
            return value
        try:
            outputs = flatten_outputs(widened(*[widen(v) for v in inputs]), torch)
        except BaseException as error:  # noqa: BLE001
            raise CaseError("RuntimeError", "golden_precision fp64: the reference failed on float64 inputs: "
                            + describe(error)) from error
        if len(outputs) != len(native) or any(o.shape != n.shape for o, n in zip(outputs, native)):
            raise CaseError("RuntimeError", "golden_precision fp64: the reference's float64 outputs have other "
                            f"shapes ({[list(o.shape) for o in outputs]}) than its native ones "
                            f"({[list(n.shape) for n in native]})")
        return [o.to(n.dtype) for o, n in zip(outputs, native)]

    def op_run_case(self, request):
        torch = self.torch
        if self.task is None:
            raise CaseError("RuntimeError", "run_case before load")
        index = int(request["index"])
        seed = int(request.get("seed", self.load_seed))
        device = self.backend.device()
        timings = {}
        edge = self.edges.get(index)
        try:
            inputs = self.inputs_for(index, seed)
        except BaseException as error:  # noqa: BLE001
            if edge is None:
                raise self.ours_if_out_of_memory(error, "get_inputs") or error
            return {"edge_case": edge[0], "not_applicable": "get_inputs: " + describe(error)}, []
        # Described before anything runs: a failure from here on is reported with its inputs.
        self._known = {"input_desc": describe_inputs(inputs, torch), "input_dtypes": input_dtypes(inputs, torch)}
        reply = {**self._known, "input_digest": input_digest(inputs, torch), "warnings": [], "golden_device": "cpu",
                 "fallback_reason": None, "edge_case": edge[0] if edge else None}
        self.compile_clock.install()  # where an implementation imports triton late
        self.compile_clock.take()  # drops what an earlier, failed case left
        vault = guard.Vault()
        golden_count = None
        golden_sizes = request.get("golden_sizes")
        by_reference = set(request.get("reference_writes") or [])
        if self.role != "implementation":
            started = time.perf_counter()
            try:
                seed_everything(seed, torch)
                model = self.task.Model(*self.init_inputs)
            except BaseException as error:  # noqa: BLE001
                raise self.ours_if_out_of_memory(error, "Model(*get_init_inputs())") or \
                    CaseError("RuntimeError", "Model(*get_init_inputs()): " + describe(error)) from error
            try:
                by_reference, golden_count, golden_sizes = self._reference(model, inputs, device, reply, vault)
            except CaseError as error:
                if edge is None:
                    raise
                return {"edge_case": edge[0], "not_applicable": str(error)}, []
            del model  # a Model that keeps its last output must not keep the golden reachable
            timings["golden_ms"] = (time.perf_counter() - started) * 1e3
            if by_reference:
                reply["warnings"].append("the reference writes into its inputs " + ", ".join(sorted(by_reference)) +
                                         ": the implementation may too")
            if self.role == "reference":
                # The implementation's executor gets what it may know: the
                # outputs' sizes and which inputs the reference writes into.
                reply.update(outputs=golden_count, golden_sizes=golden_sizes, writes_inputs=sorted(by_reference),
                             timings=timings, kept_inputs_digest=kept_inputs_digest(inputs, torch, by_reference))
                return reply, vault.reveal()[:golden_count]
        try:
            actual, impl_args = self._implementation(request, inputs, seed, device, reply, timings, golden_sizes)
        finally:
            # Every way out gives the vault's objects back to the collector.
            golden = vault.reveal()[:golden_count] if golden_count is not None else []
        # An in-place reference (one that writes into its inputs) allows the
        # implementation to write into the same inputs; any other write is a defect.
        changed = [c for c in input_changes(inputs, impl_args, torch) if c.split(" ", 2)[1] not in by_reference]
        if changed:
            raise CaseError("InputMutated", "ModelNew.forward changed its inputs (an implementation must not write "
                            "into them: the caller's data would be wrong after it): " + "; ".join(changed[:5]))
        reply["timings"] = timings
        if self.role == "implementation":
            reply["kept_inputs_digest"] = kept_inputs_digest(impl_args, torch, by_reference)
            reply["outputs"] = len(actual)
            return reply, actual
        if len(golden) != len(actual):
            raise CaseError("ShapeMismatch", f"Model returned {len(golden)} outputs, ModelNew {len(actual)}")
        reply["outputs"] = len(golden)
        shipped = []
        for g, a in zip(golden, actual):
            shipped.extend([g, a])
        return reply, shipped

    def _implementation(self, request, inputs, seed, device, reply, timings, golden_sizes):
        """ModelNew on the case: the probe first on request, the forward with
        the runtime checks on the first run, the ghost replay. Returns (the
        outputs on the host, the inputs it was given)."""
        torch = self.torch
        phases = _Phases(self.compile_clock, timings)
        started = time.perf_counter()
        model_new = self._construct_impl(seed, device)
        phases.record("construct_ms", started)
        if request.get("probe"):
            self._probe(request, inputs, seed, model_new, reply, phases)
        first_run = request.get("evidence", True)  # the case's first run carries the runtime checks
        evidence = self.runtime_checks and first_run
        checks_started = time.perf_counter()  # the checks around the forward: timings' checks_ms
        baseline = None  # an override's reference call on the device (what ATen runs), before the poison
        if evidence and self.override:
            baseline = override.aten_baseline(torch, self.task.Model(), clone_to(inputs, device, torch),
                                              self.backend, runtime_evidence.DispatchTrace, bench.device_kernels)
        # What the device allocator holds free is poisoned, so memory handed
        # back unwritten reads as NaN (a golden of this process's, in "both",
        # is hidden and kept alive meanwhile).
        self.backend.synchronize()
        poisoned = guard.poison_free_memory(torch, self.backend)
        if poisoned:
            timings["poisoned_bytes"] = poisoned
        checks_ms = (time.perf_counter() - checks_started) * 1e3
        impl_args = tuple(clone_to(inputs, device, torch))  # (a tuple: what forward got stays what is checked)
        if self.watch_reach and first_run:
            model_new.watch_folders = override.library_folders(self.library)
        watched = _Watched()
        if baseline is not None:
            model_new.trace_inside = (runtime_evidence.DispatchTrace, watched.inside)
        self._no_global_hooks("before ModelNew.forward")
        started = time.perf_counter()
        actual = self._forward(model_new, impl_args, evidence, baseline, watched)
        self._no_global_hooks("after ModelNew.forward")
        if golden_sizes is not None:
            refuse_oversized(actual, golden_sizes)
        # The outputs' device memory stays held until the checks are done: a ghost replay must
        # not be handed the blocks that still hold these very bits.
        on_device = actual
        try:
            actual = [t.cpu() for t in actual]
        except BaseException as error:  # noqa: BLE001
            raise self.classify(error, "ModelNew.forward's outputs to the host") from error
        phases.record("impl_ms", started)
        if self.watch_reach and first_run:
            model_new.watch_folders = None
            verdict = runtime_evidence.judge_reach(model_new.reached, self.library, self.override["op"])
            if verdict is not None:
                raise CaseError("LintError", verdict[1], regression_type=verdict[0])
        checks_started = time.perf_counter()
        if evidence:
            self._judge_runtime_evidence(reply, watched, baseline)
        if self.ghost_replay and first_run and any(t.numel() for t in actual):
            self._ghost_replay(model_new, inputs, device, actual)
        del on_device
        timings["checks_ms"] = checks_ms + (time.perf_counter() - checks_started) * 1e3
        if self.compile_clock.installed is not None:
            timings["compile_ms"] = phases.compile_ms
            timings["kernels_compiled"] = phases.kernels
            if self.compile_clock.hits_known:
                timings["compile_cached_ms"] = phases.cached_ms
                timings["kernels_cached"] = phases.kernels_cached
        return actual, impl_args

    def _no_global_hooks(self, when):
        """A global module hook the implementation or its library installed (at import, in
        ModelNew's construction or forward) fails the case as LintError type 5: it runs around
        ModelNew's forward and can replace its outputs, out of the static lint's sight."""
        if not self.hook_checks:
            return
        added = [h for h in guard.global_module_hooks(self.torch) if h not in (self._hooks_before or [])]
        if added:
            raise CaseError("LintError", f"runtime type 5: {when}, torch runs global module hooks the "
                            f"implementation or its library installed: {', '.join(added[:3])}"
                            + (f" and {len(added) - 3} more" if len(added) > 3 else "")
                            + " (register_module_forward_hook and its kin run around every module's forward "
                            "and can replace its outputs)", regression_type=5)

    def _construct_impl(self, seed, device):
        """ModelNew(*get_init_inputs()) made under the case's seed, on the device."""
        torch = self.torch
        try:
            seed_everything(seed, torch)
            model_new = self.impl.ModelNew(*self.init_inputs)
            return model_new.to(device) if isinstance(model_new, torch.nn.Module) else model_new
        except BaseException as error:  # noqa: BLE001
            raise self.classify(error, "ModelNew(*get_init_inputs())") from error

    def _probe(self, request, inputs, seed, model_new, reply, phases):
        """The probe (probe.py) of ModelNew against a Model of its own; a
        mismatch fails the case as HiddenStateMismatch."""
        torch = self.torch
        started = time.perf_counter()
        seed_everything(seed, torch)
        try:
            model = self.task.Model(*self.init_inputs)  # its own: the golden's is elsewhere
        except BaseException as error:  # noqa: BLE001
            raise CaseError("RuntimeError", "Model(*get_init_inputs()): " + describe(error)) from error
        result = probe.run(torch, self.task.Model, model, model_new,
                           inputs_fn=lambda: clone_to(inputs, "cpu", torch),
                           check_determinism=bool(request.get("check_determinism")))
        phases.record("probe_ms", started)
        reply["probe"] = result
        reply["warnings"].extend(result["warnings"])
        if not result["passed"]:
            raise CaseError("HiddenStateMismatch", "; ".join(result["mismatches"]))

    def _forward(self, model_new, impl_args, evidence, baseline, watched):
        """ModelNew's forward without gradients, watched by the runtime
        evidence's recorders (into `watched`) when `evidence`. Returns its
        outputs, flattened, still on the device."""
        torch = self.torch
        try:
            with contextlib.ExitStack() as watching, torch.no_grad():
                if evidence:
                    from torch.profiler import ProfilerActivity, profile
                    watched.prof = watching.enter_context(
                        profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]))
                    watched.trace = watching.enter_context(runtime_evidence.DispatchTrace(torch, probe_kernels=bool(
                        self.override)))
                    watched.launches = watching.enter_context(
                        runtime_evidence.launch_recorder(self.impl, self.library))
                actual = model_new(*impl_args)
                self.backend.synchronize()
            actual = flatten_outputs(actual, torch, plain=True)
            if evidence:  # what judge_evidence's no_work asks
                watched.outputs_are_inputs = runtime_evidence.outputs_are_inputs(actual, impl_args, torch)
            return actual
        except BaseException as error:  # noqa: BLE001
            raise self.classify(error, "ModelNew.forward") from error
        finally:
            if baseline is not None:
                model_new.trace_inside = None

    def _judge_runtime_evidence(self, reply, watched, baseline):
        """What the first run did on the device (torch operators, kernels,
        Triton launches) into the reply, less what declared exceptions cover;
        a forbidden use fails the case as LintError."""
        torch = self.torch
        trace, prof, launches, inside = watched.trace, watched.prof, watched.launches, watched.inside
        on_device = bench.device_kernels(torch, prof)  # not `kernels`: that is the compile count
        self.own_kernels = runtime_evidence.own_kernels(self.impl, self.library)  # lazily imported ones too
        own = runtime_evidence.own_names(launches, self.own_kernels, override=bool(self.override))
        self.own_kernels.update({n: j for n, j in launches.jit_functions.items() if n in own})  # ghost replay
        self.own_names |= own  # and their names and handles, those a launch cache launched too
        for name in own:
            self.own_functions |= launches.functions.get(name, set())
        reply["runtime_evidence"] = {
            "torch_ops": trace.report(), "own_kernels": sorted(own), "library": self.library,
            "kernels": {name: {"launches": n, "us": round(us, 3)} for name, (n, us) in on_device.items()},
            "triton_launches": launches.report() if launches.active else None}
        registered = set()
        if baseline is not None:
            registered = trace.registered_ops(torch)  # asked now, outside the enable context
            reply["runtime_evidence"]["aten_baseline"] = {"torch_ops": sorted(baseline[0]),
                                                          "kernels": sorted(baseline[1])}
            reply["runtime_evidence"]["library_registered"] = sorted(registered)
            reply["runtime_evidence"]["inside_registered_kernels"] = {
                op: {name: {"calls": calls, "devices": sorted(devices)} for name, (calls, devices) in ops.items()}
                for op, ops in sorted(inside.items())}
        if self.allow_torch:  # declared exceptions: what they cover is not judged
            waivers, on_device, inside = allowances.waive_runtime(self.allow_torch, trace, on_device, inside, prof)
            if waivers:
                reply["waivers"] = waivers
        if watched.outputs_are_inputs:
            reply["runtime_evidence"]["outputs_are_inputs"] = True
        verdict = runtime_evidence.judge_evidence(trace, on_device, own, baseline, registered, inside,
                                                  launches.report(), no_work=watched.outputs_are_inputs)
        if verdict is not None:
            raise CaseError("LintError", verdict[1], regression_type=verdict[0],
                            runtime_evidence=reply["runtime_evidence"])

    def op_environment(self, request):
        # The process's environment does not change between the operators it
        # runs: collect it once, stamp it each time.
        if getattr(self, "_environment", None) is None or self._environment[0] is not self.backend:
            self._environment = (self.backend, environment.collect(self.torch, self.backend))
        collected = dict(self._environment[1])
        collected["timestamp"] = environment.timestamp()
        if getattr(self, "library", None):
            collected["libraries"] = environment.library_versions(self.library)
        return {"environment": collected}, []

    def op_lint(self, request):
        from . import lint
        options = {"non_compute": bool(request.get("non_compute")), "library": request.get("library") or [],
                   "python_path": request.get("python_path") or []}
        if request.get("entries"):
            result = lint.lint_entries(request["entries"], overrides=request.get("overrides"), **options)
        else:
            result = lint.lint_file(request["file"], **options)
        return {"lint": allowances.waive_lint(result, request.get("allow_torch") or [])}, []

    def op_ping(self, request):
        return {"pid": os.getpid(), "startup": self.startup}, []
