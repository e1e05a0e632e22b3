"""Runtime evidence that the implementation's own Triton kernels do the work
(PRODUCT.md "Harder to fool"), where the static lint can be fooled:

* a trace of the torch operators ModelNew.forward dispatches (a
  TorchDispatchMode): anything beyond allocation, copies and views is
  PyTorch computing outside the kernels, a runtime regression type 3 (the
  lint misses `a @ b`, `x * (x > 0)`, operators reached through objects);
* the profile of the same forward on the device: at least one of the
  implementation's own @triton.jit kernels (its file's, or those of the
  packages it declares as its library) must run (else type 2), and kernels
  that are neither its own nor torch's copies and fills (another module's
  kernels) must not outweigh its own (type 3);
* for a dispatch-override operator, the same call made on the device
  outside the enable context first (the ATen baseline): inside the context
  the torch operators may be only those the call itself dispatches, and
  ATen's own kernels for it must not run (type 3: the work fell back to
  torch; type 2 when no library kernel ran: the override is not reached);
  and, on every backend, some Python code of the library must run during
  the call (type 2: registered but never reached);
* ghost replay (opt-in): the forward again with every own kernel made a
  no-op on freshly poisoned memory; outputs that come back bit for bit the
  same were not made by the kernels (GhostReplayUnchanged).
"""
import contextlib

from . import allowances

# aten operators that allocate, copy, move or re-view memory, or read metadata.
DATA_MOVEMENT_OPS = set("""
empty empty_like empty_strided new_empty new_empty_strided zeros zeros_like new_zeros ones ones_like
new_ones full full_like new_full fill fill_ zero_ scalar_tensor lift_fresh lift_fresh_copy
copy copy_ _to_copy to _copy_from _copy_from_and_resize clone contiguous detach detach_ alias
view _unsafe_view view_as reshape _reshape_alias as_strided as_strided_ permute transpose t
expand expand_as unsqueeze squeeze squeeze_ unsqueeze_ flatten unflatten select slice narrow split
split_with_sizes chunk unbind movedim diagonal unfold set_ resize_ resize_as_ _local_scalar_dense
item arange linspace _foreach_zero_ record_stream sym_size sym_stride sym_numel sym_storage_offset
is_same_size is_nonzero dim size stride numel storage_offset _has_compatible_shallow_copy_type
view_as_real view_as_complex resolve_conj resolve_neg conj _conj _reshape_copy view_copy t_ transpose_
swapaxes swapdims pin_memory _pin_memory is_pinned expand_copy permute_copy slice_copy select_copy
""".split())

# Device kernels torch itself launches for the operations above.
TORCH_KERNEL_MARKERS = ("at::native::", "Memcpy", "Memset", "memcpy", "memset", "FillFunctor", "fill_kernel",
                        "CatArrayBatchedCopy", "copy_kernel", "elementwise_kernel<", "unrolled_elementwise")


def import_library(library):
    """Imports each declared package: one that cannot be imported fails the load."""
    import importlib
    from .case_io import CaseError, describe
    for name in library:
        try:
            importlib.import_module(name)
        except BaseException as error:  # noqa: BLE001 - whatever the library's import raises
            raise CaseError("ImportError", f"library {name!r} (declared with library/--library) does not import: "
                            + describe(error)) from error


def library_modules(library):
    """The imported modules of the declared packages (the package and its submodules)."""
    import sys
    return [module for name, module in list(sys.modules.items())
            if module is not None and any(name == lib or name.startswith(lib + ".") for lib in library)]


def own_kernels(module, library=()):
    """{kernel name: JITFunction} of the @triton.jit functions the module
    itself defines (unwrapping @triton.autotune and @triton.heuristics), and
    those defined in the declared library packages' imported modules;
    kernels imported from elsewhere are not its own."""
    found = {}
    for lib_module in library_modules(library):
        found.update(_defined_kernels(lib_module))
    found.update(_defined_kernels(module))
    return found


def _defined_kernels(module):
    found = {}
    for value in list(vars(module).values()):
        for _ in range(8):  # wrappers hold the next layer in .fn
            if type(value).__name__ in ("JITFunction", "InterpretedFunction"):
                function = getattr(value, "fn", None)
                if getattr(function, "__module__", None) == module.__name__:
                    found[function.__name__] = value
                break
            if not hasattr(value, "fn") or not type(value).__module__.startswith("triton"):
                break
            value = value.fn
    return found


# The dispatch key of a device type's backend kernels.
DISPATCH_KEYS = {"cuda": "CUDA", "cpu": "CPU", "xpu": "XPU", "mps": "MPS", "npu": "PrivateUse1",
                 "privateuseone": "PrivateUse1"}


def qualified_name(func):
    """"aten::isclose", "aten::sum.dim_IntList": the dispatcher's name of an OpOverload, or None."""
    schema = getattr(func, "_schema", None)
    if schema is None:
        return None
    overload = getattr(func, "_overloadname", "default")
    return schema.name + ("" if overload in ("default", "") else "." + overload)


def registered_during(seen, has_kernel):
    """The operators (short names) that had a kernel for their device's dispatch key when
    dispatched inside the enable context and have none now, outside it: kernels the library
    registered (an override of a composite op such as isclose, which ATen itself decomposes).
    `seen`: {(qualified name, key): (short name, had a kernel)}; `has_kernel(name, key)`."""
    out = set()
    for (qualname, key), (name, had) in seen.items():
        try:
            now = bool(has_kernel(qualname, key))
        except Exception:  # noqa: BLE001 - an operator the dispatcher cannot answer for stays counted
            now = True
        if had and not now:
            out.add(name)
    return out


def op_name(func):
    packet = getattr(func, "overloadpacket", None)
    name = getattr(packet, "__name__", None) or str(func)
    return name.split("::")[-1].split(".")[0]


class DispatchTrace:
    """Records every aten operator run inside it: {name: [calls, devices]}."""

    def __init__(self, torch, probe_kernels=False):
        """probe_kernels: also record, for each operator and device, whether the dispatcher
        had a kernel for the device's key at that moment (registered_ops)."""
        from torch.utils._python_dispatch import TorchDispatchMode
        trace = self
        has_kernel = getattr(torch._C, "_dispatch_has_kernel_for_dispatch_key", None) if probe_kernels else None

        class Mode(TorchDispatchMode):
            def __torch_dispatch__(self, func, types, args=(), kwargs=None):
                result = func(*args, **(kwargs or {}))
                devices = set()
                for value in list(args) + list((kwargs or {}).values()) + [result]:
                    for item in value if isinstance(value, (list, tuple)) else [value]:
                        if isinstance(item, torch.Tensor):
                            devices.add(item.device.type)
                name = op_name(func)
                if name not in DATA_MOVEMENT_OPS and devices - {"cpu"}:
                    allowances.record_site(trace, name)  # where from: declared exceptions may name it
                entry = trace.ops.setdefault(name, [0, set()])
                entry[0] += 1
                entry[1] |= devices
                if has_kernel is not None:
                    trace._probe(has_kernel, func, name, devices)
                return result

        self.ops = {}
        # Declared exceptions (allowances.waive_runtime): each compute operator's call sites,
        # and the operators an allowance covers, which compute_ops leaves out.
        self.sites, self.sites_overflow, self.allowed = {}, set(), set()
        self.skipped = allowances.skipped_folders(torch)
        self.kernel_keys = {}  # (qualified name, dispatch key) -> (short name, had a kernel)
        self.mode = Mode()

    def _probe(self, has_kernel, func, name, devices):
        qualname = qualified_name(func)
        for device in devices:
            key = DISPATCH_KEYS.get(device)
            if qualname is None or key is None or (qualname, key) in self.kernel_keys:
                continue
            try:
                self.kernel_keys[(qualname, key)] = (name, bool(has_kernel(qualname, key)))
            except Exception:  # noqa: BLE001 - unknown to the dispatcher: never counted as registered
                self.kernel_keys[(qualname, key)] = (name, False)

    def registered_ops(self, torch):
        """registered_during for what this trace saw, asked once the enable context is left."""
        has_kernel = getattr(torch._C, "_dispatch_has_kernel_for_dispatch_key", None)
        return registered_during(self.kernel_keys, has_kernel) if has_kernel is not None else set()

    def __enter__(self):
        self.mode.__enter__()
        return self

    def __exit__(self, *exc):
        return self.mode.__exit__(*exc)

    def compute_ops(self):
        """The compute operators that touched a device (an input or an output
        there): host-side arithmetic (a launcher's own bookkeeping, an
        autotuner's statistics) is not the operator's work on the device."""
        return {name: entry for name, entry in self.ops.items()
                if name not in DATA_MOVEMENT_OPS and not name.startswith(("_foreach_zero", "sym_"))
                and entry[1] - {"cpu"} and name not in self.allowed}

    def report(self):
        return {name: {"calls": calls, "devices": sorted(devices)} for name, (calls, devices) in sorted(self.ops.items())}


def is_torch_kernel(name):
    return any(marker in name for marker in TORCH_KERNEL_MARKERS)


# Torch's own kernels that only move or fill memory, which an override may run too.
DATA_KERNEL_MARKERS = ("Memcpy", "Memset", "memcpy", "memset", "FillFunctor", "fill_kernel", "CatArrayBatchedCopy",
                       "copy_kernel")


def judge_reach(reached, library, op):
    """(2, message) when no Python code of the library ran during an override's call."""
    if reached:
        return None
    return 2, (f"runtime type 2: the override is registered but never reached: no code of the library "
               f"({', '.join(library)}) ran during {op}(...) inside the enable context, so ATen computed it")


def judge_inside_kernels(inside):
    """(3, message) when the library's registered kernels ran torch compute operators on the
    device inside them (below the caller's dispatch trace). `inside`: {registered op:
    {torch op: [calls, devices]}} (override.traced_registrations)."""
    found = {}
    # an op one kernel calls that the library registered too ran the library's (traced) kernel
    own_ops = {op.split("::")[-1].split(".")[0] for op in inside}
    for registered, ops in sorted(inside.items()):
        for name, (calls, devices) in ops.items():
            if name not in DATA_MOVEMENT_OPS and name not in own_ops and not name.startswith(("_foreach_zero", "sym_")) \
                    and set(devices) - {"cpu"}:
                found.setdefault(registered, []).append(f"aten::{name} ({calls}x)")
    if not found:
        return None
    shown = "; ".join(f"aten::{op}: {', '.join(sorted(ops)[:6])}" for op, ops in found.items())
    return 3, ("runtime type 3: the library's registered kernels computed with PyTorch operators inside them "
               f"(the work is torch's, whatever kernel copies it out): {shown}")


def judge_override(trace, kernels, own, baseline, registered=(), inside=None):
    """The override's evidence against the ATen baseline (ops, kernels), or None.
    `registered`: operators whose kernel the library registered (registered_during): the
    override itself, never extra compute. `inside`: what its registered kernels ran."""
    baseline_ops, baseline_kernels = baseline
    extra = {name: entry for name, entry in trace.compute_ops().items()
             if name not in baseline_ops and name not in registered}
    if extra:
        shown = ", ".join(f"aten::{name} ({calls}x)" for name, (calls, _) in sorted(extra.items())[:8])
        return 3, ("runtime type 3: inside the enable context the call ran PyTorch compute operators that the "
                   f"reference call itself does not dispatch ({', '.join(sorted(baseline_ops)) or 'none'}): {shown}")
    verdict = judge_inside_kernels(inside or {})
    if verdict is not None:
        return verdict
    if kernels is None:
        return None
    aten = sorted(name for name in kernels if name in baseline_kernels and name not in own
                  and not any(marker in name for marker in DATA_KERNEL_MARKERS))
    if not any(name in own for name in kernels):
        return 2, ("runtime type 2: none of the library's Triton kernels (" + (", ".join(sorted(own)) or "none found")
                   + ") ran inside the enable context" + (f"; ATen's own kernels for the call did ({', '.join(aten[:4])}):"
                                                          " the override is not reached" if aten else ""))
    if aten:
        return 3, ("runtime type 3: ATen's own kernels for the call ran inside the enable context beside the "
                   f"library's: {', '.join(aten[:4])} (the work fell back to torch)")
    # The override's own torch calls run below the dispatch trace (inside the
    # traced operator): the profile alone shows them. Torch's compute kernels
    # (anything but copies and fills) must not outweigh the library's.
    own_us = sum(us for name, (_, us) in kernels.items() if name in own)
    other = {name: us for name, (_, us) in kernels.items()
             if name not in own and not any(marker in name for marker in DATA_KERNEL_MARKERS)}
    if other and sum(other.values()) > own_us:
        return 3, ("runtime type 3: inside the enable context kernels that are not the library's take more device "
                   f"time than its own ({sum(other.values()):.1f} us against {own_us:.1f} us): "
                   + ", ".join(sorted(other)[:6]))
    return None


def judge_evidence(trace, kernels, own, baseline=None, registered=(), inside=None):
    """(regression type, message) for what the evidence shows, or None.
    `baseline`: an override's ATen baseline (ops, kernels); `registered`, `inside`: see judge_override."""
    if baseline is not None:
        return judge_override(trace, kernels, own, baseline, registered, inside)
    compute = trace.compute_ops()
    if compute:
        shown = ", ".join(f"aten::{name} ({calls}x on {'/'.join(sorted(devices)) or 'no tensor'})"
                          for name, (calls, devices) in sorted(compute.items())[:8])
        return 3, ("runtime type 3: ModelNew.forward ran PyTorch compute operators outside its Triton kernels: "
                   + shown)
    if kernels is None:
        return None
    if not any(name in own for name in kernels):
        return 2, ("runtime type 2: the profile of ModelNew.forward shows none of its own Triton kernels "
                   f"({', '.join(sorted(own)) or 'none defined'}: the file's and its library's) running on the "
                   "device; device kernels seen: " + (", ".join(sorted(kernels)[:8]) or "none"))
    return _judge_foreign(kernels, own)


def _judge_foreign(kernels, own):
    own_us = sum(us for name, (_, us) in kernels.items() if name in own)
    ran = sorted(name for name in kernels if name in own)
    foreign = {name: us for name, (_, us) in kernels.items() if name not in own and not is_torch_kernel(name)}
    if foreign and sum(foreign.values()) > own_us:
        return 3, ("runtime type 3: kernels that are not its own (the file's or its library's) take more device "
                   "time than its own "
                   f"({sum(foreign.values()):.1f} us against {own_us:.1f} us in {', '.join(ran)}): "
                   + ", ".join(sorted(foreign)[:8]))
    return None


@contextlib.contextmanager
def ghost_kernels(own):
    """Every own kernel's launch a no-op while inside; restored after."""
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
