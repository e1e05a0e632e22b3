"""The operator side of the executor process: everything that runs a task's
Model and an implementation's ModelNew. The C++ executor (runner/executor/
executor_main.cc) calls Session.handle_json for each request and ships the
returned tensors to its parent as raw bytes.

Requests (JSON objects, "op" picks the op_<name> handler; the C++ side's
structs are in runner/executor/protocol.h, and tests/unit/protocol_test.cc
checks this list, its order and its fields against them):
  load           {task_file, impl_file, backend, seed, golden_precision, params?: [dict, ...],
                  edge_cases, runtime_checks, ghost_replay}
  describe_cases {}          (input_desc of every case, for an operator that cannot run)
  run_case       {index, seed, probe, check_determinism, evidence}
  environment    {}
  lint           {file, non_compute}
  bench_prepare  {index, seed, warmup, flush_l2, skip_framework}
  bench_measure  {side: framework|implementation, repeats, adaptive, max_repeats?,
                  rse_target, max_seconds, profile_iterations}
  bench_release  {}
  bench_transfer {nbytes}   (benchmarks only)
  ping           {}
Every reply has "ok"; failures carry "error_type", "error_msg" and
"device_poisoned" (the device cannot serve another case), and what
the request had established before it failed: a load's case_count once the
task's cases are counted, a case's input_desc and input_dtypes once its
inputs are built.
"""
import contextlib
import importlib.util
import json
import math
import os
import random
import re
import sys
import time
import traceback

from . import backend as backend_module
from . import bench, edge_cases, environment, guard, probe, runtime_evidence
from .compile_clock import CompileClock


class CaseError(Exception):
    """A failure that is this case's verdict, with its error_type."""

    def __init__(self, error_type, message, device_poisoned=False, **extra):
        super().__init__(message)
        self.error_type = error_type
        self.device_poisoned = device_poisoned
        self.extra = extra  # more reply fields (regression_type, runtime_evidence)


def seed_everything(seed, torch=None):
    random.seed(seed)
    try:
        import numpy
        numpy.random.seed(seed % (2 ** 32))
    except ImportError:
        pass
    if torch is not None:
        seed_torch(torch, seed)


def seed_torch(torch, seed):
    """torch.manual_seed, without its cost where there is no CUDA: there it
    queues a lazy CUDA seeding with a formatted stack trace each call (0.4 ms,
    and the queue only grows), for a device this process can never use."""
    if torch.cuda.is_available():
        torch.manual_seed(seed)  # the CPU generator and every CUDA device
        return
    torch.random.default_generator.manual_seed(seed)
    for name in ("npu", "xpu", "mps"):
        device_module = getattr(torch, name, None)
        if device_module is not None and getattr(device_module, "is_available", lambda: False)():
            seed_all = getattr(device_module, "manual_seed_all", None) or device_module.manual_seed
            seed_all(seed)


def import_file(path, role):
    """Imports a file as a module under a private name, so names that are not
    identifiers (4_Abs_torch.py) work and two operators never collide."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise CaseError("ImportError", f"{path}: no such file")
    stem = re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
    name = f"opverify_{role}_{stem}"
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as error:  # noqa: BLE001 - SyntaxError, SystemExit, anything at import
        sys.modules.pop(name, None)
        raise CaseError("ImportError", f"{path}: {describe(error)}") from error
    return module


def describe(error):
    return f"{type(error).__name__}: {error}\n" + "".join(traceback.format_exception(error)[-12:])


def describe_input(value, torch):
    """One input as the seed's verify.py writes it in input_desc: a tensor by
    shape and dtype; anything else {"type": "scalar", "value": ...}, the value
    itself for a bool, int, float or str, else its repr (a non-finite float
    too: JSON has no NaN). Ours: a list or tuple holding tensors also has
    "items", each element described the same way."""
    if isinstance(value, torch.Tensor):
        return {"type": "tensor", "shape": list(value.shape), "dtype": str(value.dtype)}
    plain = isinstance(value, (bool, int, str)) or (isinstance(value, float) and math.isfinite(value))
    try:
        shown = value if plain else repr(value)
    except Exception as error:  # noqa: BLE001 - a broken __repr__ must not fail the case
        shown = f"<{type(value).__name__}: repr failed: {type(error).__name__}>"
    out = {"type": "scalar", "value": shown}
    if isinstance(value, (list, tuple)) and any(isinstance(v, torch.Tensor) for v in value):
        out["items"] = [describe_input(v, torch) for v in value]
    return out


def describe_inputs(inputs, torch):
    return [describe_input(v, torch) for v in inputs]


def input_dtypes(inputs, torch):
    dtypes = []
    for value in inputs:
        if isinstance(value, torch.Tensor):
            dtypes.append(str(value.dtype).replace("torch.", ""))
        elif isinstance(value, (list, tuple)):
            dtypes.extend(str(v.dtype).replace("torch.", "") for v in value if isinstance(v, torch.Tensor))
    return dtypes


def clone_to(inputs, device, torch):
    """Each side gets its own copy: an implementation that writes into its
    inputs must not change what the reference sees."""
    def one(value):
        if isinstance(value, torch.Tensor):
            return value.detach().to(device, copy=True)
        if isinstance(value, list):
            return [one(v) for v in value]
        if isinstance(value, tuple):
            return tuple(one(v) for v in value)
        return value
    return [one(v) for v in inputs]


def input_tensors(values, torch):
    """(name, tensor) for each tensor argument, one level into lists and tuples."""
    out = []
    for i, value in enumerate(values):
        if isinstance(value, torch.Tensor):
            out.append((str(i), value))
        elif isinstance(value, (list, tuple)):
            out.extend((f"{i}[{j}]", t) for j, t in enumerate(value) if isinstance(t, torch.Tensor))
    return out


def materialized(tensor):
    """The tensor's values in memory of its own, contiguous: a lazy conjugate
    or negative view (torch.conj(x); the .imag of a conjugate) holds its
    base's memory and a flag, so its raw bytes are not its values."""
    for resolve in ("resolve_conj", "resolve_neg"):  # absent from older torch
        if hasattr(tensor, resolve):
            tensor = getattr(tensor, resolve)()
    return tensor.contiguous()


def as_bytes(tensor, torch):
    """A tensor's elements as one flat uint8 tensor: its bits, for comparing
    or hashing (a NaN equals itself, -0.0 differs from 0.0)."""
    flat = materialized(tensor.detach()).reshape(-1)
    return flat.to(torch.uint8) if flat.dtype == torch.bool else flat.view(torch.uint8)


def same_bits(a, b, torch):
    return a.shape == b.shape and a.dtype == b.dtype and torch.equal(as_bytes(a, torch), as_bytes(b, torch))


def input_changes(originals, used, torch):
    """The inputs whose bytes differ from the originals after a forward (bits,
    not values: a NaN is equal to itself, -0.0 is not 0.0)."""
    changed = []
    for (name, before), (_, after) in zip(input_tensors(originals, torch), input_tensors(used, torch)):
        after = after.detach().cpu()
        if after.shape != before.shape or after.dtype != before.dtype:
            changed.append(f"input {name} became {list(after.shape)} {after.dtype}")
            continue
        if same_bits(before, after, torch):
            continue
        a, b = as_bytes(before, torch), as_bytes(after, torch)
        changed.append(f"input {name} ({list(before.shape)} {str(before.dtype).replace('torch.', '')}): "
                       f"{int((a != b).sum())} of {a.numel()} bytes differ")
    return changed


def input_digest(inputs, torch, limit=1 << 20):
    """A fingerprint of the inputs (shapes, dtypes and up to 1 MiB of each
    tensor's bytes): whether two seeds gave different data."""
    import hashlib
    digest = hashlib.blake2b(digest_size=16)
    for name, tensor in input_tensors(inputs, torch):
        digest.update(f"{name}:{list(tensor.shape)}:{tensor.dtype};".encode())
        digest.update(as_bytes(tensor.cpu(), torch)[:limit].numpy().tobytes())
    for value in inputs:
        if not isinstance(value, (torch.Tensor, list, tuple)):
            digest.update(repr(value).encode())
    return digest.hexdigest()


def flatten_outputs(output, torch):
    items = list(output) if isinstance(output, (tuple, list)) else [output]
    tensors = []
    for item in items:
        if isinstance(item, torch.Tensor):
            tensors.append(item.detach())
        elif isinstance(item, (bool, int, float)):
            tensors.append(torch.tensor(item))
        else:
            raise CaseError("RuntimeError", f"output of type {type(item).__name__} is not a tensor")
    return tensors


class Session:
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
        self.runtime_checks = self.ghost_replay = False
        self.own_kernels = {}
        self.compile_clock = CompileClock()
        self._known = {}  # what a request established before it failed: its error reply says it too

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
        return json.dumps(reply), [materialized(t) for t in tensors]

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
        if getattr(self, "_identities", None) is None:
            self._identities = self._torch_identities()
        else:
            changed = self._tainted()
            if changed:
                raise CaseError("ExecutorTainted", "an earlier operator replaced " + ", ".join(changed[:10]))
        try:
            self.backend = backend_module.select(torch, request.get("backend", "auto"))
        except RuntimeError as error:
            raise CaseError("DeviceError", str(error)) from error
        self.load_seed = int(request.get("seed", 0))
        self.golden_precision = request.get("golden_precision", "native")
        if self.golden_precision not in ("native", "fp64"):
            raise CaseError("RuntimeError", f"unknown golden_precision {self.golden_precision!r}")
        # A pooled executor's last operator must not answer for this one.
        self.task = self.impl = None
        self.cases = []
        # The task and its cases first: an implementation that fails to import
        # fails every case, and the error reply says how many there are.
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
        impl = import_file(request["impl_file"], "impl")
        if not hasattr(impl, "ModelNew"):
            raise CaseError("ImportError", f"{impl.__file__}: defines no class ModelNew")
        self.impl = impl
        # Runtime evidence needs a device profile and Triton kernels: cuda only.
        on_cuda = self.backend.name == "cuda"
        self.runtime_checks = bool(request.get("runtime_checks")) and on_cuda
        self.ghost_replay = bool(request.get("ghost_replay")) and on_cuda
        self.own_kernels = runtime_evidence.own_kernels(self.impl) if on_cuda else {}
        if self.compile_clock.install():
            self.compile_clock.take()  # what importing compiled is not a case's
        return dict(self._known), []

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
        torch = self.torch
        name = type(error).__name__
        module = type(error).__module__ or ""
        if isinstance(error, CaseError):
            return error
        text = f"{stage}: {describe(error)}"
        if "CompilationError" in name or ("triton" in module and "compil" in module):
            return CaseError("CompilationError", text)
        if self.backend.is_out_of_memory(error):
            self.backend.empty_cache()
            return CaseError("OutOfMemory", text)
        if self.backend.is_device_error(error) or not self.backend.healthy():
            return CaseError("DeviceError", text, device_poisoned=True)
        return CaseError("RuntimeError", text)

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
                    raise CaseError("RuntimeError", "reference Model failed on CPU and on "
                                    f"{device}: " + describe(second)) from second
                if widened is not None:
                    widened = widened.to(device)
            by_reference = {entry.split(" ", 2)[1] for entry in input_changes(inputs, golden_args, torch)}
            native = flatten_outputs(golden, torch)
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
            del golden, golden_args, native, judged, on_host
        return by_reference, count

    def _ghost_replay(self, model_new, inputs, device, actual):
        """The forward again, every own kernel a no-op, on poisoned memory:
        outputs that come back bit for bit were not made by the kernels."""
        torch = self.torch
        if not self.own_kernels:
            return
        args = clone_to(inputs, device, torch)
        self.backend.synchronize()
        guard.poison_free_memory(torch, self.backend)
        try:
            with runtime_evidence.ghost_kernels(self.own_kernels), torch.no_grad():
                ghost = model_new(*args)
                self.backend.synchronize()
            ghost = [t.cpu() for t in flatten_outputs(ghost, torch)]
        except BaseException:  # noqa: BLE001 - failing without its kernels is changing
            return
        if len(ghost) == len(actual) and all(same_bits(g, a, torch) for g, a in zip(ghost, actual)):
            raise CaseError("GhostReplayUnchanged", "ghost replay: with its @triton.jit kernels ("
                            + ", ".join(sorted(self.own_kernels)) + ") made no-ops, ModelNew.forward returned the "
                            "same outputs bit for bit: the kernels do not make them")

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
                raise
            return {"edge_case": edge[0], "not_applicable": "get_inputs: " + describe(error)}, []
        # Described before anything runs: a failure from here on is reported with its inputs.
        self._known = {"input_desc": describe_inputs(inputs, torch), "input_dtypes": input_dtypes(inputs, torch)}
        reply = {**self._known, "input_digest": input_digest(inputs, torch), "warnings": [], "golden_device": "cpu",
                 "fallback_reason": None, "edge_case": edge[0] if edge else None}
        self.compile_clock.install()  # where an implementation imports triton late
        self.compile_clock.take()  # drops what an earlier, failed case left
        started = time.perf_counter()
        try:
            seed_everything(seed, torch)
            model = self.task.Model(*self.init_inputs)
        except BaseException as error:  # noqa: BLE001
            raise CaseError("RuntimeError", "Model(*get_init_inputs()): " + describe(error)) from error
        try:
            seed_everything(seed, torch)
            model_new = self.impl.ModelNew(*self.init_inputs)
            model_new = model_new.to(device) if isinstance(model_new, torch.nn.Module) else model_new
        except BaseException as error:  # noqa: BLE001
            raise self.classify(error, "ModelNew(*get_init_inputs())") from error
        compile_ms, kernels = 0.0, 0

        def phase(name, since):
            """Records a phase's wall time less Triton's compilation inside it."""
            nonlocal compile_ms, kernels
            ms, count = self.compile_clock.take()
            wall = (time.perf_counter() - since) * 1e3
            if ms is None:
                timings[name] = wall
                return
            compile_ms, kernels = compile_ms + ms, kernels + count
            timings[name] = max(0.0, wall - ms)

        phase("construct_ms", started)

        if request.get("probe"):
            started = time.perf_counter()
            result = probe.run(torch, self.task.Model, model, model_new,
                               inputs_fn=lambda: clone_to(inputs, "cpu", torch),
                               check_determinism=bool(request.get("check_determinism")))
            phase("probe_ms", started)
            reply["probe"] = result
            reply["warnings"].extend(result["warnings"])
            if not result["passed"]:
                raise CaseError("HiddenStateMismatch", "; ".join(result["mismatches"]))

        started = time.perf_counter()
        vault = guard.Vault()
        try:
            by_reference, golden_count = self._reference(model, inputs, device, reply, vault)
        except CaseError as error:
            if edge is None:
                raise
            return {"edge_case": edge[0], "not_applicable": str(error)}, []
        del model  # a Model that keeps its last output must not keep the golden reachable
        timings["golden_ms"] = (time.perf_counter() - started) * 1e3

        try:
            # The golden is hidden and kept alive; what the device allocator holds
            # free is poisoned, so memory handed back unwritten reads as NaN.
            self.backend.synchronize()
            poisoned = guard.poison_free_memory(torch, self.backend)
            if poisoned:
                timings["poisoned_bytes"] = poisoned
            impl_args = clone_to(inputs, device, torch)
            first_run = request.get("evidence", True)  # the case's first run carries the runtime checks
            evidence = self.runtime_checks and first_run
            started = time.perf_counter()
            try:
                with contextlib.ExitStack() as watching, torch.no_grad():
                    if evidence:
                        from torch.profiler import ProfilerActivity, profile
                        prof = watching.enter_context(profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]))
                        trace = watching.enter_context(runtime_evidence.DispatchTrace(torch))
                    actual = model_new(*impl_args)
                    self.backend.synchronize()
                actual = [t.cpu() for t in flatten_outputs(actual, torch)]
            except BaseException as error:  # noqa: BLE001
                raise self.classify(error, "ModelNew.forward") from error
            phase("impl_ms", started)
            if evidence:
                kernels = bench.device_kernels(torch, prof)
                reply["runtime_evidence"] = {
                    "torch_ops": trace.report(), "own_kernels": sorted(self.own_kernels),
                    "kernels": {name: {"launches": n, "us": round(us, 3)} for name, (n, us) in kernels.items()}}
                verdict = runtime_evidence.judge_evidence(trace, kernels, self.own_kernels)
                if verdict is not None:
                    raise CaseError("LintError", verdict[1], regression_type=verdict[0],
                                    runtime_evidence=reply["runtime_evidence"])
            if self.ghost_replay and first_run and any(t.numel() for t in actual):
                self._ghost_replay(model_new, inputs, device, actual)
        finally:
            # Every way out gives the vault's objects back to the collector.
            golden = vault.reveal()[:golden_count]
        # An in-place reference (one that writes into its inputs) allows the
        # implementation to write into the same inputs; any other write is a defect.
        changed = [c for c in input_changes(inputs, impl_args, torch) if c.split(" ", 2)[1] not in by_reference]
        if by_reference:
            reply["warnings"].append("the reference writes into its inputs " + ", ".join(sorted(by_reference)) +
                                     ": the implementation may too")
        if changed:
            raise CaseError("InputMutated", "ModelNew.forward changed its inputs (an implementation must not write "
                            "into them: the caller's data would be wrong after it): " + "; ".join(changed[:5]))
        if self.compile_clock.installed is not None:
            timings["compile_ms"] = compile_ms
            timings["kernels_compiled"] = kernels
        if len(golden) != len(actual):
            raise CaseError("ShapeMismatch", f"Model returned {len(golden)} outputs, ModelNew {len(actual)}")
        reply["outputs"] = len(golden)
        reply["timings"] = timings
        shipped = []
        for g, a in zip(golden, actual):
            shipped.extend([g, a])
        return reply, shipped

    # -- benchmark (bench.py) ----------------------------------------------
    def op_bench_prepare(self, request):
        """Builds one case's inputs on the device and both models there, and
        warms both up. Kept until the next bench_prepare or bench_release."""
        torch = self.torch
        if self.task is None:
            raise CaseError("RuntimeError", "bench_prepare before load")
        self._bench = None
        index = int(request["index"])
        seed = int(request.get("seed", self.load_seed))
        device = self.backend.device()
        inputs = self.inputs_for(index, seed)
        self._known = {"input_desc": describe_inputs(inputs, torch), "input_dtypes": input_dtypes(inputs, torch)}
        reply = dict(self._known)
        sides = {}
        resident = {}  # each side's inputs and model state: the cpu backend's peak memory starts there
        self.compile_clock.install()
        self.compile_clock.take()
        # One device copy of the inputs for both sides (correctness, with a
        # copy each, was the verify phase's job): the memory each side's
        # forward adds on top is then comparable.
        try:
            args = clone_to(inputs, device, torch)
        except BaseException as error:  # noqa: BLE001
            raise self.classify(error, f"copying the inputs to {device}") from error
        arg_tensors = [t for _, t in input_tensors(args, torch)]
        for side, build in (("framework", lambda: self.task.Model(*self.init_inputs)),
                            ("implementation", lambda: self.impl.ModelNew(*self.init_inputs))):
            if side == "framework" and request.get("skip_framework"):
                continue
            try:
                seed_everything(seed, torch)
                model = build()
                if isinstance(model, torch.nn.Module):
                    model = model.to(device)
            except BaseException as error:  # noqa: BLE001
                raise self.classify(error, f"{side}: building the model on {device}") from error
            sides[side] = self._bench_callable(model, args)
            weights = list(model.parameters()) + list(model.buffers()) if isinstance(model, torch.nn.Module) else []
            resident[side] = bench.state_bytes(weights + arg_tensors)
        warmup = int(request.get("warmup", 5))
        for side, fn in sides.items():
            try:
                for _ in range(warmup):
                    fn()
                self.backend.synchronize()
            except BaseException as error:  # noqa: BLE001
                raise self.classify(error, f"{side}: warm-up") from error
        self.compile_clock.take()  # the warm-up's compilations; bench_measure warns about any after it
        # What the memory roofline needs: the bytes one forward must at least
        # read (its inputs) and write (its outputs), and the peak bandwidth.
        try:
            with torch.no_grad():
                outputs = flatten_outputs(sides["implementation"](), torch)
            self.backend.synchronize()
            reply["bytes_moved"] = sum(t.numel() * t.element_size() for t in arg_tensors + outputs)
            del outputs
        except BaseException as error:  # noqa: BLE001
            raise self.classify(error, "implementation: a forward after the warm-up") from error
        reply["memory_bandwidth_gbs"] = self.backend.memory_bandwidth_gbs()
        self._bench = {"sides": sides, "resident": resident,
                       "timer": bench.Timer(torch, self.backend, bool(request.get("flush_l2", True)))}
        return reply, []

    def _bench_callable(self, model, args):
        torch = self.torch

        def forward():
            with torch.no_grad():
                return model(*args)
        return forward

    def op_bench_measure(self, request):
        """Times one side of the prepared case: repeats (adaptive on request),
        peak memory, and the per-kernel breakdown."""
        state = getattr(self, "_bench", None)
        if not state:
            raise CaseError("RuntimeError", "bench_measure before bench_prepare")
        side = request.get("side", "implementation")
        fn = state["sides"].get(side)
        if fn is None:
            raise CaseError("RuntimeError", f"bench_measure: side {side!r} was not prepared")
        timer = state["timer"]
        self.compile_clock.take()
        try:
            peak_mb, added_mb = timer.peak_memory_mb(fn, state["resident"].get(side, 0))
            stats = timer.repeats(fn, int(request.get("repeats", 50)), adaptive=bool(request.get("adaptive")),
                                  max_repeats=request.get("max_repeats"),
                                  rse_target=float(request.get("rse_target", 0.01)),
                                  max_seconds=float(request.get("max_seconds", 60.0)))
        except BaseException as error:  # noqa: BLE001
            raise self.classify(error, f"{side}: timing") from error
        reply = {"side": side, "stats": stats, "peak_memory_mb": peak_mb, "added_memory_mb": added_mb,
                 "warnings": []}
        if stats.get("launch_not_hidden"):
            reply["warnings"].append(f"{side}: in {stats['launch_not_hidden']} of {stats['repeats']} repeats the "
                                     "host's launch outlasted the busy wait: those include launch latency")
        # The profiler may rebind torch functions of its own; what the
        # forward did is checked before it runs, then the baseline moves on.
        tainted_before = self._tainted()
        try:
            reply["operators"] = bench.kernel_breakdown(self.torch, self.backend, fn,
                                                        int(request.get("profile_iterations", 10)))
        except Exception as error:  # noqa: BLE001 - the profiler is optional; its failure is not the case's
            reply["operators"] = {}
            reply["warnings"].append(f"{side}: profiler failed: {type(error).__name__}: {error}")
        if not tainted_before:
            self._identities = self._torch_identities()
        compile_ms, kernels = self.compile_clock.take()
        if kernels:
            reply["warnings"].append(f"{side}: {kernels} kernel(s) compiled while being timed ({compile_ms:.1f} ms): "
                                     "the warm-up did not reach every specialisation")
        return reply, []

    def op_bench_release(self, request):
        state = getattr(self, "_bench", None)
        if state:
            state["timer"].release()
        self._bench = None
        self.backend.empty_cache()
        return {}, []

    def op_environment(self, request):
        # The process's environment does not change between the operators it
        # runs: collect it once, stamp it each time.
        if getattr(self, "_environment", None) is None or self._environment[0] is not self.backend:
            self._environment = (self.backend, environment.collect(self.torch, self.backend))
        collected = dict(self._environment[1])
        collected["timestamp"] = environment.timestamp()
        return {"environment": collected}, []

    def op_lint(self, request):
        from . import lint
        return {"lint": lint.lint_file(request["file"], non_compute=bool(request.get("non_compute")))}, []

    def op_ping(self, request):
        return {"pid": os.getpid()}, []

    def op_bench_transfer(self, request):
        """perf/executor_transfer.cc: ships `nbytes` of uint8 (made once) to
        measure the cost of the tensor hand-over itself."""
        import torch
        nbytes = int(request["nbytes"])
        if getattr(self, "_bench_tensor", None) is None or self._bench_tensor.numel() != nbytes:
            self._bench_tensor = torch.full((nbytes,), 7, dtype=torch.uint8)
        return {}, [self._bench_tensor]
