"""Defences around the implementation's run (PRODUCT.md "Harder to fool").

While ModelNew.forward runs, the reference's outputs must be neither
reachable nor reusable:

* Vault keeps the golden tensors alive (so a caching allocator cannot hand
  their memory to the implementation) and out of the garbage collector's
  lists (so `gc.get_objects()`, `gc.get_referrers()` and frame locals show
  nothing): a strong reference taken through the C API, the object
  untracked, and only an integer address kept.
* poison_free_memory fills the device allocator's free blocks with 0xFF
  bytes (NaN in every floating dtype, -1 in every integer one), so memory an
  implementation returns without writing reads as garbage instead of
  whatever the reference left there.
* global_module_hooks lists the hooks torch runs around every module's
  forward (register_module_forward_hook and its kin): one installed by the
  implementation or its library, at import or while it runs, can replace
  ModelNew's outputs with anything, out of the static lint's sight.
"""
import ctypes
import gc

_api = ctypes.pythonapi
_api.Py_IncRef.argtypes = [ctypes.py_object]
_api.Py_DecRef.argtypes = [ctypes.py_object]
_api.PyObject_GC_UnTrack.argtypes = [ctypes.c_void_p]
_api.PyObject_GC_Track.argtypes = [ctypes.c_void_p]

POISON_BYTE = 0xFF


class Vault:
    """Objects held by address only, untracked by the collector while held."""

    def __init__(self):
        self._held = []  # (address, was tracked): plain ints, nothing to follow

    def hide(self, objects):
        """Takes the objects; the caller must drop its own references."""
        for obj in objects:
            tracked = gc.is_tracked(obj)
            _api.Py_IncRef(obj)
            if tracked:
                _api.PyObject_GC_UnTrack(id(obj))
            self._held.append((id(obj), tracked))

    def reveal(self):
        """Gives the objects back, tracked again, in the order hidden."""
        out = []
        for address, tracked in self._held:
            obj = ctypes.cast(address, ctypes.py_object).value
            if tracked and not gc.is_tracked(obj):
                _api.PyObject_GC_Track(address)
            _api.Py_DecRef(obj)  # `obj` now holds the reference the vault held
            out.append(obj)
        self._held = []
        return out

    def __len__(self):
        return len(self._held)


def free_blocks(torch):
    """(address, size) of every free block the CUDA caching allocator holds."""
    blocks = []
    for segment in torch.cuda.memory_snapshot():
        address = int(segment["address"])
        for block in segment.get("blocks", []):
            size = int(block["size"])
            start = int(block.get("address", address))
            if block.get("state") == "inactive":
                blocks.append((start, size))
            address = start + size
    return blocks


class _DeviceBytes:
    """A borrowed view of raw device memory, for torch.as_tensor."""

    def __init__(self, address, size):
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1", "data": (address, False),
                                         "version": 2, "strides": None}


def poison_free_memory(torch, backend):
    """Fills the allocator's free blocks with POISON_BYTE; returns the bytes
    filled (0 where the backend has no allocator to inspect)."""
    if backend.name != "cuda":
        return 0
    filled = 0
    device = backend.device()
    for address, size in free_blocks(torch):
        view = torch.as_tensor(_DeviceBytes(address, size), device=device)
        view.fill_(POISON_BYTE)
        filled += size
        del view
    backend.synchronize()
    return filled


GLOBAL_HOOK_REGISTRIES = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                          "_global_backward_pre_hooks")


def global_module_hooks(torch):
    """["registry: module.qualname" of each hook] in torch's global module hook registries."""
    module = torch.nn.modules.module
    found = []
    for registry in GLOBAL_HOOK_REGISTRIES:
        for hook in list((getattr(module, registry, None) or {}).values()):
            found.append(f"{registry.strip('_')}: {getattr(hook, '__module__', '?')}."
                         f"{getattr(hook, '__qualname__', type(hook).__name__)}")
    return found
