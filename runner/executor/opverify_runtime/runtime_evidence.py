"""Runtime evidence that the implementation's own Triton kernels do the work
(PRODUCT.md "Harder to fool"), where the static lint can be fooled:

* a trace of the torch operators ModelNew.forward dispatches (a
  TorchDispatchMode): anything beyond allocation, copies, views and metadata
  (NOT_COMPUTE_OPS) is PyTorch computing outside the kernels, a runtime
  regression type 3 (the lint misses `a @ b`, `x * (x > 0)`, operators
  reached through objects);
* the profile of the same forward on the device, with where each Triton
  launch came from (provenance.py: the implementation's file, a declared
  library package, code the library generated at run time, or elsewhere): at
  least one of the implementation's or its library's kernels must run (else
  type 2), and kernels that are neither those nor torch's copies and fills
  must not outweigh them (type 3);
* for a dispatch-override operator, the same call made on the device
  outside the enable context first (the ATen baseline): inside the context
  the torch operators may be only those the call itself dispatches, and
  ATen's own kernels for it must not run (type 3: the work fell back to
  torch; type 2 when no library kernel ran: the override is not reached);
  and, on every backend, some Python code of the library must run during
  the call (type 2: registered but never reached);
* ghost replay (opt-in): the forward again with every own kernel made a
  no-op on freshly poisoned memory; outputs that come back bit for bit the
  same were not made by the kernels (GhostReplayUnchanged; the no-ops are
  ghost.py's).

Every list in a message is cut to a few names and a count (provenance.listed).
"""

from . import allowances
from .provenance import LIBRARY_ORIGINS, OWN_ORIGINS, LaunchRecorder, Provenance, listed, package_folders

# aten operators that allocate, copy, move or re-view memory, read metadata or assert on it:
# not the operator's compute, wherever they run (the copy into the output included).
NOT_COMPUTE_OPS = set("""
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
result_type can_cast promote_types is_floating_point is_complex is_signed is_contiguous is_strides_like_format
is_non_overlapping_and_dense is_set_to _shape_as_tensor empty_permuted new_empty_strided alias_copy
squeeze_copy unsqueeze_copy t_copy transpose_copy unbind_copy split_copy split_with_sizes_copy narrow_copy
as_strided_copy diagonal_copy detach_copy view_as_real_copy view_as_complex_copy unfold_copy moveaxis
broadcast_to broadcast_tensors atleast_1d atleast_2d atleast_3d ravel tensor_split hsplit vsplit dsplit
unsafe_chunk unsafe_split unsafe_split_with_sizes positive _assert_async _functional_assert_async
_assert_tensor_metadata _assert_scalar _functional_assert_scalar sym_constrain_range
sym_constrain_range_for_size _functional_sym_constrain_range _functional_sym_constrain_range_for_size
_nested_tensor_size _nested_tensor_strides
""".split())

# Device kernels torch itself launches for the operations above.
TORCH_KERNEL_MARKERS = ("at::native::", "Memcpy", "Memset", "memcpy", "memset", "FillFunctor", "fill_kernel",
                        "CatArrayBatchedCopy", "copy_kernel", "elementwise_kernel<", "unrolled_elementwise")


def import_library(library, declared_with=lambda name: "library/--library"):
    """Imports each declared package (or preloaded module): one that cannot be
    imported fails the load; `declared_with(name)` says where it was named."""
    import importlib
    from .case_io import CaseError, describe
    for name in library:
        try:
            importlib.import_module(name)
        except BaseException as error:  # noqa: BLE001 - whatever the library's import raises
            raise CaseError("ImportError", f"library {name!r} (declared with {declared_with(name)}) does not import: "
                            + describe(error)) from error


def library_modules(library):
    """The imported modules of the declared packages (the package and its submodules)."""
    import sys
    return [module for name, module in list(sys.modules.items())
            if module is not None and any(name == lib or name.startswith(lib + ".") for lib in library)]


def launch_recorder(impl, library):
    """A provenance.LaunchRecorder for the implementation module (its file) and the declared
    packages (their folders); Triton's own folder is its launch path."""
    import sys
    own_file = getattr(impl, "__file__", None)
    folders = [f for name in library for f in package_folders(sys.modules.get(name))]
    return LaunchRecorder(Provenance([own_file] if own_file else [], folders,
                                     package_folders(sys.modules.get("triton"))))


def own_names(recorder, scanned, override=False):
    """The names of the kernels that count as the implementation's own: those launched from the
    file's or its library's code (for an override, the library's only), where the recorder
    could watch the launches; else the static scan's (`scanned`)."""
    if recorder is not None and recorder.active:
        return recorder.names(LIBRARY_ORIGINS if override else OWN_ORIGINS)
    return set(scanned)


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


# The "device" of a host operator that computes on data copied from the device in the same call
# (x.cpu(), then torch on the host): not a launcher's bookkeeping, the work moved off the device.
HOST_FROM_DEVICE = "host (data copied from the device)"
_TRANSFERS = ("_to_copy", "copy_", "copy", "to", "_copy_from", "_copy_from_and_resize")


def _storage_key(tensor):
    """The storage a tensor views (views of one storage share it), or None."""
    try:
        storage = tensor.untyped_storage() if hasattr(tensor, "untyped_storage") else tensor.storage()
        return storage.data_ptr()
    except Exception:  # noqa: BLE001 - no storage of its own (meta, sparse): never host data
        return None


class HostData:
    """Follows data a traced call copies from the device to the host: `step` marks the host
    outputs of such a copy, and of any host operator that reads marked data, and says whether
    this operator computed on the host with data from the device (a compute operator reading a
    marked tensor). Tensors are (device type, storage key) pairs."""

    def __init__(self):
        self.marked = set()

    def step(self, name, inputs, outputs):
        from_device = any(device != "cpu" for device, _ in inputs)
        host_outputs = [key for device, key in outputs if device == "cpu" and key is not None]
        if name in _TRANSFERS and from_device:
            self.marked.update(host_outputs)
            return False
        reads = any(device == "cpu" and key is not None and key in self.marked for device, key in inputs)
        if not reads:
            return False
        self.marked.update(host_outputs)
        return name not in NOT_COMPUTE_OPS and not name.startswith(("_foreach_zero", "sym_"))


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
                inputs, outputs = [], []
                for value, side in [(v, inputs) for v in list(args) + list((kwargs or {}).values())] + [(result, outputs)]:
                    for item in value if isinstance(value, (list, tuple)) else [value]:
                        if isinstance(item, torch.Tensor):
                            devices.add(item.device.type)
                            side.append((item.device.type, _storage_key(item)))
                name = op_name(func)
                if trace.host_data.step(name, inputs, outputs):
                    devices.add(HOST_FROM_DEVICE)
                if name not in NOT_COMPUTE_OPS and devices - {"cpu"}:
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
        self.host_data = HostData()
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
        there) or computed on the host with data copied from the device in the
        same call (HOST_FROM_DEVICE): other host-side arithmetic (a launcher's
        own bookkeeping, an autotuner's statistics) is not the operator's work."""
        return {name: entry for name, entry in self.ops.items()
                if name not in NOT_COMPUTE_OPS and not name.startswith(("_foreach_zero", "sym_"))
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


def _is_compute(name, devices):
    return name not in NOT_COMPUTE_OPS and not name.startswith(("_foreach_zero", "sym_")) and set(devices) - {"cpu"}


def judge_inside_kernels(inside):
    """(3, message) when the library's registered kernels ran torch compute operators on the
    device inside them (below the caller's dispatch trace). `inside`: {registered op:
    {torch op: [calls, devices]}} (override.traced_registrations)."""
    found = {}
    # an op one kernel calls that the library registered too ran the library's (traced) kernel,
    # on the device: on the host (HOST_FROM_DEVICE) it ran ATen's
    own_ops = {op.split("::")[-1].split(".")[0] for op in inside}
    for registered, ops in sorted(inside.items()):
        for name, (calls, devices) in sorted(ops.items()):
            if _is_compute(name, devices) and (name not in own_ops or HOST_FROM_DEVICE in devices):
                found.setdefault(registered, []).append(f"aten::{name} ({calls}x)")
    if not found:
        return None
    shown = "; ".join(f"aten::{op}: {listed(ops, 6)}" for op, ops in list(found.items())[:4])
    if len(found) > 4:
        shown += f"; and {len(found) - 4} more registered kernels"
    return 3, ("runtime type 3: the library's registered kernels computed with PyTorch operators inside them "
               f"(the work is torch's, whatever kernel copies it out): {shown}")


def _ran(kernels, names):
    """`names` that ran, longest device time first, as "name (12.3 us)"."""
    ran = sorted(((kernels[n][1], n) for n in names if n in kernels), reverse=True)
    return [f"{name} ({us:.1f} us)" for us, name in ran]


def _launched_elsewhere(launches, own):
    """The Triton launches that were not the implementation's or its library's, with where they
    came from: "name (foreign, defined in x.py)"."""
    out = []
    for name, entry in sorted((launches or {}).items()):
        if name in own:
            continue
        where = entry.get("defined_in") or entry.get("via") or "unknown"
        out.append(f"{name} ({'/'.join(sorted(entry.get('origins', {})))}: {where})")
    return out


def judge_override(trace, kernels, own, baseline, registered=(), inside=None, launches=None):
    """The override's evidence against the ATen baseline (ops, kernels), or None.
    `own`: the names of the kernels launched from the library's code (provenance.py);
    `registered`: operators whose kernel the library registered (registered_during): the
    override itself, never extra compute. `inside`: what its registered kernels ran;
    `launches`: the launch record, for the messages."""
    baseline_ops, baseline_kernels = baseline
    extra = {name: entry for name, entry in trace.compute_ops().items()
             if name not in baseline_ops and name not in registered}
    if extra:
        shown = listed([f"aten::{name} ({calls}x)" for name, (calls, _) in sorted(extra.items())], 8)
        return 3, ("runtime type 3: inside the enable context the call ran PyTorch compute operators that the "
                   f"reference call itself does not dispatch ({listed(sorted(baseline_ops), 8) or 'none'}): {shown}")
    verdict = judge_inside_kernels(inside or {})
    if verdict is not None:
        return verdict
    if kernels is None:
        return None
    aten = sorted(name for name in kernels if name in baseline_kernels and name not in own
                  and not any(marker in name for marker in DATA_KERNEL_MARKERS))
    if not any(name in own for name in kernels):
        elsewhere = _launched_elsewhere(launches, own)
        return 2, ("runtime type 2: no Triton kernel launched from the library's code ran inside the enable context"
                   + (f"; Triton kernels from elsewhere did: {listed(elsewhere)}" if elsewhere else "")
                   + (f"; ATen's own kernels for the call did ({listed(aten)}): the override is not reached"
                      if aten else f"; device kernels seen: {listed(_ran(kernels, kernels)) or 'none'}"))
    if aten:
        return 3, ("runtime type 3: ATen's own kernels for the call ran inside the enable context beside the "
                   f"library's: {listed(aten)} (the work fell back to torch)")
    # The override's own torch calls run below the dispatch trace (inside the
    # traced operator): the profile alone shows them. Torch's compute kernels
    # (anything but copies and fills) must not outweigh the library's.
    own_us = sum(us for name, (_, us) in kernels.items() if name in own)
    other = {name: us for name, (_, us) in kernels.items()
             if name not in own and not any(marker in name for marker in DATA_KERNEL_MARKERS)}
    if other and sum(other.values()) > own_us:
        return 3, ("runtime type 3: inside the enable context kernels that are not the library's take more device "
                   f"time than its own ({sum(other.values()):.1f} us against {own_us:.1f} us in "
                   f"{listed(_ran(kernels, own))}): {listed(_ran(kernels, other), 6)}")
    return None


def judge_evidence(trace, kernels, own, baseline=None, registered=(), inside=None, launches=None,
                   no_work=False):
    """(regression type, message) for what the evidence shows, or None.
    `own`: names of the implementation's and its library's kernels (provenance.py);
    `baseline`: an override's ATen baseline (ops, kernels); `registered`, `inside`, `launches`:
    see judge_override. `no_work`: every output is one of the forward's inputs, returned as it
    came (outputs_are_inputs): with no device kernel and no torch compute either, nothing did
    the work that type 2 asks whose it was (ATen's conj_physical of a real tensor returns the
    tensor itself), and the judge alone decides: an output that is its input passes only where
    the reference's golden is that input."""
    if baseline is not None:
        return judge_override(trace, kernels, own, baseline, registered, inside, launches)
    compute = trace.compute_ops()
    if compute:
        shown = listed([f"aten::{name} ({calls}x on {'/'.join(sorted(devices)) or 'no tensor'})"
                        for name, (calls, devices) in sorted(compute.items())], 8)
        return 3, ("runtime type 3: ModelNew.forward ran PyTorch compute operators outside its Triton kernels: "
                   + shown)
    if kernels is None or (no_work and not kernels):
        return None
    if not any(name in own for name in kernels):
        elsewhere = _launched_elsewhere(launches, own)
        return 2, ("runtime type 2: the profile of ModelNew.forward shows none of its own Triton kernels (the "
                   "file's and its library's) running on the device"
                   + (f"; Triton kernels from elsewhere ran: {listed(elsewhere)}" if elsewhere else "")
                   + f"; device kernels seen: {listed(_ran(kernels, kernels), 8) or 'none'}")
    return _judge_foreign(kernels, own)


def _judge_foreign(kernels, own):
    own_us = sum(us for name, (_, us) in kernels.items() if name in own)
    foreign = {name: us for name, (_, us) in kernels.items() if name not in own and not is_torch_kernel(name)}
    if foreign and sum(foreign.values()) > own_us:
        return 3, ("runtime type 3: kernels that are not its own (the file's or its library's) take more device "
                   "time than its own "
                   f"({sum(foreign.values()):.1f} us against {own_us:.1f} us in {listed(_ran(kernels, own))}): "
                   + listed(_ran(kernels, foreign), 8))
    return None


def outputs_are_inputs(outputs, inputs, torch):
    """Every output (at least one) is one of the input tensors, returned as it came: the same
    tensor, or a view of the same memory with the same dtype, shape, strides and offset."""
    tensors = [t for t in inputs if isinstance(t, torch.Tensor)]

    def same(out, given):
        return out is given or (out.dtype == given.dtype and out.device == given.device
                                and out.data_ptr() == given.data_ptr() and out.shape == given.shape
                                and out.stride() == given.stride())
    return bool(outputs) and all(isinstance(out, torch.Tensor) and any(same(out, t) for t in tensors)
                                 for out in outputs)
