"""Dispatch-override operators (docs/MANIFEST.md, "override"): the task and the
implementation made from the manifest's entry instead of two files.

The reference (Model) is `op(*args, **kwargs)`; the implementation (ModelNew)
is the same call made inside the library's enable context, entered only
around that call. Inputs are made per case and seed from the argument specs
(the executor seeds every RNG before it asks for them, as for any task), and
handed to both sides as one flat list: the positional arguments, then the
keyword arguments' values in the entry's order.

While a runtime check watches, ModelNew also records whether any Python code
of the declared library ran during the call: an override that is registered
but never reached runs none (every backend; on cuda the profile says more).
"""
import contextlib
import importlib
import os
import sys
import types

from .case_io import CaseError, describe

INTEGER_DTYPES = {"int8", "int16", "int32", "int64", "uint8", "short", "int", "long"}


def load_callable(text, what):
    """"module:attr.path" imported and looked up; ImportError names `what`."""
    module_name, _, attr = text.partition(":")
    try:
        value = importlib.import_module(module_name)
        for part in attr.split("."):
            value = getattr(value, part)
    except BaseException as error:  # noqa: BLE001 - anything the library's import raises
        raise CaseError("ImportError", f"override {what} {text!r}: {describe(error)}") from error
    if not callable(value):
        raise CaseError("ImportError", f"override {what} {text!r} is a {type(value).__name__}, not a callable")
    return value


def load_op(torch, path):
    """The reference callable of a dotted path under torch (torch.softmax,
    torch.Tensor.sum, torch.ops.aten.prod.dim_int)."""
    value = torch
    try:
        for part in path.split(".")[1:]:
            value = getattr(value, part)
    except (AttributeError, RuntimeError) as error:
        raise CaseError("ImportError", f"override op {path!r}: this torch ({torch.__version__}) has no such "
                        f"callable: {error}") from error
    if not callable(value):
        raise CaseError("ImportError", f"override op {path!r} is a {type(value).__name__}, not a callable")
    return value


def _value(value, params):
    if isinstance(value, str) and value.startswith("$"):
        if value[1:] not in params:
            raise CaseError("RuntimeError", f"override argument {value!r}: no such sweep parameter in {params}")
        return params[value[1:]]
    return value


def _dims(value):
    """A shape dimension, or several from a string parameter: "20x320x15" (a sweep over whole
    shapes of different ranks), "" for a 0-d tensor."""
    if isinstance(value, str):
        try:
            return [int(d) for d in value.split("x") if d.strip()]
        except ValueError:
            raise CaseError("RuntimeError", f"override shape {value!r} is not dimensions joined by x "
                            "(\"20x320x15\")") from None
    return [int(value)]


def make_tensor(spec, params, torch):
    """A tensor of an argument spec, drawn from the global RNGs (seeded by the executor)."""
    shape = []
    for dim in spec["shape"]:
        shape.extend(_dims(_value(dim, params)))
    dtype_name = str(_value(spec.get("dtype", "bool" if spec.get("init") == "bool" else "float32"), params))
    dtype = getattr(torch, dtype_name, None)
    if not isinstance(dtype, torch.dtype):
        raise CaseError("RuntimeError", f"override argument dtype {dtype_name!r} is not a torch dtype")
    init = spec.get("init")
    if init is None:
        init = "bool" if dtype == torch.bool else "randint" if dtype_name in INTEGER_DTYPES else "randn"
    low, high = spec.get("low"), spec.get("high")
    if init == "randn":
        return torch.randn(shape, dtype=torch.float64 if not dtype.is_complex else dtype).to(dtype)
    if init in ("uniform", "positive"):
        low, high = (0.5, 1.5) if init == "positive" else (0.0 if low is None else low, 1.0 if high is None else high)
        return (torch.rand(shape, dtype=torch.float64) * (high - low) + low).to(dtype)
    if init == "randint":
        low = (0 if dtype == torch.uint8 else -8) if low is None else int(low)
        high = 16 if high is None else int(high)
        return torch.randint(low, high, shape, dtype=torch.int64).to(dtype)
    if init == "bool":
        return (torch.rand(shape) < 0.5).to(dtype)
    raise CaseError("RuntimeError", f"override argument init {init!r} is not one of randn, uniform, randint, "
                    "bool, positive")


def make_value(spec, params, torch):
    if isinstance(spec, dict) and "shape" in spec:
        return make_tensor(spec, params, torch)
    if isinstance(spec, list):
        return [make_value(item, params, torch) for item in spec]
    return _value(spec, params)


def library_folders(library):
    """The source folders (or files) of the declared packages, once imported."""
    folders = []
    for name in library:
        module = sys.modules.get(name)
        if module is None:
            continue
        locations = list(getattr(module, "__path__", None) or [])
        if not locations and getattr(module, "__file__", None):
            locations = [module.__file__]
        folders.extend(os.path.realpath(p) for p in locations)
    return tuple(folders)


@contextlib.contextmanager
def library_code_watch(folders, seen):
    """Adds to `seen` the library source files whose Python functions are
    called inside (sys.setprofile: calls made from C++, such as a
    torch.library kernel the dispatcher runs, are seen too)."""
    previous = sys.getprofile()
    cache = {}

    def watch(frame, event, arg):
        if event == "call":
            filename = frame.f_code.co_filename
            inside = cache.get(filename)
            if inside is None:
                real = os.path.realpath(filename)
                inside = cache[filename] = any(real == f or real.startswith(f + os.sep) for f in folders)
            if inside:
                seen.add(filename)

    sys.setprofile(watch)
    try:
        yield seen
    finally:
        sys.setprofile(previous)


@contextlib.contextmanager
def traced_registrations(torch, trace_class, inside, watching):
    """While inside, every Python kernel registered through torch.library.Library.impl is
    wrapped: while `watching["on"]`, the torch operators it runs are traced (a dispatch mode
    of its own: the caller's does not see below the operator it dispatched) into
    `inside[op]`. Registrations made before (at import) are not wrapped; the profile still
    weighs their kernels."""
    library_class = getattr(getattr(torch, "library", None), "Library", None)
    original = getattr(library_class, "impl", None)
    if original is None:
        yield inside
        return

    def impl(self, op_name, fn, *args, **kwargs):
        name = op_name if isinstance(op_name, str) else getattr(op_name, "__name__", str(op_name))
        return original(self, op_name, _traced_kernel(fn, name, torch, trace_class, inside, watching), *args, **kwargs)

    library_class.impl = impl
    try:
        yield inside
    finally:
        library_class.impl = original


def _traced_kernel(fn, name, torch, trace_class, inside, watching):
    import functools

    @functools.wraps(fn)
    def kernel(*args, **kwargs):
        if not watching["on"]:
            return fn(*args, **kwargs)
        with trace_class(torch) as trace:
            out = fn(*args, **kwargs)
        ops = inside.setdefault(name, {})
        for op, (calls, devices) in trace.ops.items():
            entry = ops.setdefault(op, [0, set()])
            entry[0] += calls
            entry[1] |= devices
        return out
    return kernel


def build_task(spec, torch):
    """The task module of an "override" object: Model and get_inputs."""
    op_path = spec["op"]
    op = load_op(torch, op_path)
    positional = list(spec.get("args", []))
    keyword = dict(spec.get("kwargs", {}))
    names = list(keyword)

    def call(inputs):
        args = list(inputs[:len(positional)])
        return op(*args, **dict(zip(names, inputs[len(positional):])))

    class Model(torch.nn.Module):
        def forward(self, *inputs):
            return call(inputs)

    def get_inputs(**params):
        return [make_value(s, params, torch) for s in positional + [keyword[n] for n in names]]

    task = types.ModuleType(f"opverify_override_task_{op_path}")
    task.__file__ = f"<override {op_path}>"
    task.Model, task.get_inputs, task.get_init_inputs = Model, get_inputs, lambda: []
    task.call = call
    return task


def enable_context(enable):
    """A function making the enable context: the callable itself, or the pair's enter/exit."""
    if isinstance(enable, str):
        return load_callable(enable, "enable")
    enter = load_callable(enable["enter"], "enable.enter")
    leave = load_callable(enable["exit"], "enable.exit")

    @contextlib.contextmanager
    def pair():
        enter()
        try:
            yield
        finally:
            leave()
    return pair


def build_impl(spec, task, torch):
    """The implementation module: ModelNew makes the task's call inside the enable context."""
    make_context = enable_context(spec["enable"])
    call = task.call

    class ModelNew(torch.nn.Module):
        watch_folders = None  # the library's folders, while a runtime check watches
        reached = ()
        trace_inside = None   # (trace class, {op: {torch op: [calls, devices]}}) while the evidence watches
        held = 0              # library_context() entered around many calls: forward does not enter it again

        def forward(self, *inputs):
            with contextlib.ExitStack() as stack:
                if self.trace_inside is not None:
                    watching = {"on": True}
                    stack.callback(watching.update, on=False)  # a registration that outlives the call stops tracing
                    stack.enter_context(traced_registrations(torch, self.trace_inside[0], self.trace_inside[1],
                                                             watching))
                if not self.held:
                    stack.enter_context(make_context())
                if self.watch_folders is None:
                    return call(inputs)
                seen = set()
                with library_code_watch(self.watch_folders, seen):
                    out = call(inputs)
                self.reached = tuple(sorted(seen))
                return out

        @contextlib.contextmanager
        def library_context(self):
            """The enable context entered once around many forwards (a benchmark's warm-up and
            timed repeats): entering it registers the library's kernels (FlagGems: about a
            thousand, 10 ms), which is not the operator's time."""
            with make_context():
                self.held += 1
                try:
                    yield
                finally:
                    self.held -= 1

    enable = spec["enable"]
    impl = types.ModuleType(f"opverify_override_impl_{spec['op']}")
    impl.__file__ = f"<override {spec['op']} inside {enable if isinstance(enable, str) else enable['enter']}>"
    impl.ModelNew = ModelNew
    return impl


def held_context(model):
    """What a benchmark enters once around a side's forwards: an override's enable context
    (ModelNew.library_context), nothing for any other model."""
    return getattr(model, "library_context", None) or contextlib.nullcontext


def aten_baseline(torch, model, inputs, backend, trace_class, device_kernels):
    """The torch operators and device kernels the reference call dispatches
    on the device outside the enable context: what ATen itself would run."""
    from torch.profiler import ProfilerActivity, profile
    with torch.no_grad(), profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        with trace_class(torch) as trace:
            model(*inputs)
        backend.synchronize()
    return set(trace.compute_ops()), set(device_kernels(torch, prof))
