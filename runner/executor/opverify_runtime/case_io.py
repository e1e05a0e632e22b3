"""What a case is made of and what it returns, for the executor's handlers:
the error a request fails with, seeding, importing the operator's files, and
inputs and outputs described, copied, compared and digested."""
import importlib.util
import math
import os
import random
import re
import sys
import traceback


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


def _hash_tensors(digest, values, torch, limit=None, written=()):
    """Feeds `digest` each input tensor's name, shape, dtype and bytes (up to `limit` of them),
    but those named in `written`."""
    for name, tensor in input_tensors(values, torch):
        if name in written:
            continue
        digest.update(f"{name}:{list(tensor.shape)}:{tensor.dtype};".encode())
        data = as_bytes(tensor.detach().cpu(), torch)
        digest.update((data if limit is None else data[:limit]).numpy().tobytes())


def input_digest(inputs, torch, limit=1 << 20):
    """A fingerprint of the inputs (shapes, dtypes and up to 1 MiB of each
    tensor's bytes): whether two seeds gave different data."""
    import hashlib
    digest = hashlib.blake2b(digest_size=16)
    _hash_tensors(digest, inputs, torch, limit)
    for value in inputs:
        if not isinstance(value, (torch.Tensor, list, tuple)):
            digest.update(repr(value).encode())
    return digest.hexdigest()


def kept_inputs_digest(values, torch, written=()):
    """A fingerprint of every byte of the input tensors but those named in `written` (which the
    reference writes into). The reference's, of the inputs as built, and the implementation's,
    of its inputs after ModelNew.forward, must agree: compared by the runner, outside the
    implementation's process, so a forward that writes into its inputs and then rewrites the
    runtime's own copies to match is still seen."""
    import hashlib
    digest = hashlib.sha256()  # (strong, and faster than blake2b where the CPU has SHA instructions)
    _hash_tensors(digest, values, torch, written=written)
    return digest.hexdigest()


def flatten_outputs(output, torch, plain=False):
    """The outputs as a list of tensors. `plain` (an implementation's): each must be a plain
    torch.Tensor (or nn.Parameter); a subclass's own methods (its detach, its __torch_function__)
    could show the judge other values than its data, which is what a caller computes with."""
    items = list(output) if isinstance(output, (tuple, list)) else [output]
    tensors = []
    for i, item in enumerate(items):
        if plain and isinstance(item, torch.Tensor) and type(item) not in (torch.Tensor, torch.nn.Parameter):
            raise CaseError("RuntimeError", f"output {i} is a {type(item).__module__}.{type(item).__qualname__}, "
                            "a subclass of torch.Tensor: ModelNew must return plain tensors (a subclass's own "
                            "methods could show the judge other values than the tensor's data)")
        if isinstance(item, torch.Tensor):
            tensors.append(item.detach())
        elif isinstance(item, (bool, int, float)):
            tensors.append(torch.tensor(item))
        else:
            raise CaseError("RuntimeError", f"output of type {type(item).__name__} is not a tensor")
    return tensors


def refuse_oversized(actual, golden_sizes):
    """ShapeMismatch before an output is copied or made contiguous, where
    ModelNew returned another number of outputs or one with more elements
    than its golden: a zero-stride view (torch.empty(1).expand(2**29)) costs
    nothing to return and gigabytes to materialise."""
    if len(actual) != len(golden_sizes):
        raise CaseError("ShapeMismatch", f"Model returned {len(golden_sizes)} outputs, ModelNew {len(actual)}")
    for i, (tensor, size) in enumerate(zip(actual, golden_sizes)):
        if tensor.numel() > size:
            raise CaseError("ShapeMismatch", f"output {i}: ModelNew returned shape {list(tensor.shape)} "
                            f"({tensor.numel()} elements), the golden has {size} elements")
