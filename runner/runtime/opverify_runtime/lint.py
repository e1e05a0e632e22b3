"""The static lint of a Triton implementation: `opverify lint FILE`.

A stricter drop-in for upstream's `validate_triton_impl.py FILE --json`: pure analysis with
Python's own `ast` (the file is never imported or executed), the same JSON fields plus ours.

Regression types (the lowest that applies is `regression_type`; `checks` lists every check):
  1  no @triton.jit kernel at all
  2  kernels exist, but none is launched from ModelNew.forward or anything it reaches
  3  PyTorch computes: torch.*/F.* calls, tensor compute methods and `@` in forward or anything
     it reaches; nn layers anywhere; and the ways to hide compute from those names (dynamic
     lookups, exec/eval, importing the reference, aliases, lambdas, ATen operators)
  4  every launched kernel is a placeholder: it only moves data (skipped with non_compute)
  5  (ours) evasion of the measurement: side streams, threads, timer or torch monkey-patching

Reachability follows calls from ModelNew.forward (and __call__, forward hooks) into module-level
functions, methods, lambdas, autograd.Function.apply and instances of local classes, through
local, module-level, class-attribute and default-argument aliases. Lines are the file's own.
"""
import ast
import builtins
import json
import os
import re
import sys
from collections import deque

# --------------------------------------------------------------------------------------------
# Names
# --------------------------------------------------------------------------------------------

CHECK_TYPES = {
    "triton_kernel_exists": 1,
    "kernel_called_from_forward": 2,
    "no_forbidden_torch_ops": 3,
    "no_placeholder_kernels": 4,
    "no_dynamic_lookup": 3,
    "no_dynamic_code": 3,
    "no_reference_use": 3,
    "no_hidden_torch_compute": 3,
    "no_aten_ops": 3,
    "no_side_streams_or_threads": 5,
    "no_timer_tampering": 5,
}
VIOLATION_CHECKS = [name for name in CHECK_TYPES
                    if name not in ("triton_kernel_exists", "kernel_called_from_forward",
                                    "no_placeholder_kernels")]

TYPE_TITLES = {
    1: "no @triton.jit kernel",
    2: "no kernel launched from ModelNew.forward",
    3: "PyTorch computes outside the Triton kernels",
    4: "only placeholder kernels (data movement, no compute)",
    5: "measurement evasion (side streams, threads, patched timers or torch)",
}

# torch calls allowed in forward and what it reaches: allocation, metadata, grad/rng state.
ALLOWED_TORCH_CALLS = {
    "torch." + name for name in (
        "empty", "empty_like", "empty_strided", "zeros", "zeros_like", "ones", "ones_like",
        "full", "full_like", "tensor", "as_tensor", "arange", "linspace",
        "finfo", "iinfo", "device", "Size", "dtype", "get_default_dtype", "is_tensor",
        "is_floating_point", "is_complex", "promote_types", "result_type", "can_cast",
        "broadcast_shapes", "is_grad_enabled", "no_grad", "inference_mode", "enable_grad",
        "set_grad_enabled", "manual_seed", "seed", "initial_seed", "get_rng_state",
        "set_rng_state", "Generator", "Tensor",
        "nn.Parameter", "nn.parameter.Parameter", "nn.Module", "nn.ParameterList",
        "nn.ParameterDict", "nn.Buffer", "nn.Identity",
    )
}
# torch attributes that are values, not compute (dtypes, layouts, namespaces).
TORCH_VALUES = {
    "float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16",
    "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "long", "short", "int",
    "complex32", "complex64", "complex128", "cfloat", "cdouble", "chalf", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "qint8", "quint8",
    "qint32", "Tensor", "Size", "dtype", "device", "layout", "strided", "sparse_coo",
    "contiguous_format", "channels_last", "channels_last_3d", "preserve_format",
    "memory_format", "version", "__version__", "inf", "nan", "pi", "e", "finfo", "iinfo",
    "Generator", "nn", "cuda", "npu", "backends", "autograd", "linalg", "fft", "special",
    "testing", "utils", "distributed", "types", "overrides", "amp", "cpu", "mps", "xpu",
}
# nn holders allowed anywhere; every other torch.nn.<Capitalised> is a PyTorch layer.
NN_HOLDERS = {"Module", "Parameter", "ParameterList", "ParameterDict", "ModuleList",
              "ModuleDict", "Sequential", "Buffer", "Identity"}
SDPA = {"torch.nn.functional.scaled_dot_product_attention", "torch.scaled_dot_product_attention",
        "torch._scaled_dot_product_attention"}

# Tensor methods that compute (receiver unknown statically; these names are tensor compute).
FORBIDDEN_TENSOR_METHODS = set("""
sum nansum mean nanmean max min amax amin aminmax argmax argmin prod cumsum cumprod cummax cummin
logcumsumexp logsumexp std var norm median nanmedian mode quantile nanquantile all any
count_nonzero matmul mm bmm mv dot vdot addmm addmv addbmm baddbmm addr outer ger inner kron
tensordot cross add add_ sub sub_ subtract mul mul_ multiply div div_ divide true_divide
floor_divide remainder fmod neg neg_ negative reciprocal reciprocal_ pow pow_ square sqrt sqrt_
rsqrt rsqrt_ exp exp_ exp2 expm1 log log_ log1p log2 log10 abs abs_ absolute sign sgn clamp
clamp_ clip clip_ clamp_min clamp_max maximum minimum fmax fmin lerp addcmul addcdiv hypot atan2
sin cos tan asin acos atan sinh cosh tanh tanh_ asinh acosh atanh erf erfc erfinv sigmoid
sigmoid_ logit round floor ceil trunc frac nan_to_num xlogy relu relu_ gelu silu elu selu celu
leaky_relu softplus hardtanh hardswish hardsigmoid mish softmax log_softmax softmin glu threshold
eq ne lt le gt ge greater less equal isclose allclose logical_and logical_or logical_not
logical_xor bitwise_and bitwise_or bitwise_xor bitwise_not where masked_fill masked_fill_
masked_scatter isnan isinf isfinite sort argsort topk kthvalue msort unique gather scatter
scatter_ scatter_add scatter_add_ scatter_reduce index_add index_add_ index_copy index_fill
index_put index_put_ index_select take take_along_dim masked_select nonzero flip fliplr flipud
roll rot90 repeat repeat_interleave tile tril triu conv1d conv2d conv3d linear layer_norm
batch_norm group_norm instance_norm dropout numpy apply_ map_
""".split())
# For reference (anything else is unknown and not flagged): layout and metadata methods.
ALLOWED_TENSOR_METHODS = set("""
view view_as reshape reshape_as permute transpose contiguous to clone size shape stride numel
dim ndimension element_size data_ptr is_contiguous expand expand_as unsqueeze squeeze flatten
unflatten t narrow detach storage_offset type type_as float half bfloat16 int long bool double
cpu cuda npu item tolist requires_grad_ zero_ fill_ copy_ new_empty new_zeros new_ones new_full
new_tensor split chunk unbind movedim diagonal unfold as_strided get_device is_floating_point
""".split())

# nn.Module's own API: self.<these>() is not an nn layer's forward.
NN_MODULE_API = set("""
parameters named_parameters buffers named_buffers children named_children modules named_modules
register_buffer register_parameter register_module add_module state_dict load_state_dict to cuda
cpu float half double bfloat16 type train eval requires_grad_ zero_grad extra_repr get_parameter
get_buffer get_submodule apply register_forward_hook register_forward_pre_hook
""".split())
HOOK_REGISTRARS = {"register_forward_hook", "register_forward_pre_hook"}

# Module-wide path classes: (prefix, check, reason). A prefix matches itself and its members.
PATH_RULES = [
    ("torch.ops", "no_aten_ops", "calls dispatcher operators directly (torch.ops), which the torch.* name checks do not see"),
    ("torch._C", "no_aten_ops", "calls torch's C bindings directly (torch._C), bypassing the torch.* name checks"),
    ("torch._ops", "no_aten_ops", "reaches the operator registry (torch._ops) directly"),
    ("torch._VF", "no_aten_ops", "calls torch's internal variable functions (torch._VF) directly"),
    ("torch._refs", "no_aten_ops", "calls torch's Python reference implementations (torch._refs)"),
    ("torch._prims", "no_aten_ops", "calls torch primitives (torch._prims) directly"),
    ("torch._prims_common", "no_aten_ops", "calls torch primitives (torch._prims_common) directly"),
    ("torch._decomp", "no_aten_ops", "calls torch decompositions (torch._decomp) directly"),
    ("torch.library", "no_aten_ops", "registers or overrides operator implementations (torch.library), which can change what the reference computes"),
    ("torch.overrides", "no_aten_ops", "intercepts torch functions (torch.overrides)"),
    ("torch.utils._python_dispatch", "no_aten_ops", "intercepts the dispatcher (TorchDispatchMode)"),
    ("torch.compile", "no_dynamic_code", "compiles PyTorch code into kernels the lint cannot see (torch.compile)"),
    ("torch.jit", "no_dynamic_code", "compiles or forks PyTorch code the lint cannot see (torch.jit)"),
    ("torch._dynamo", "no_dynamic_code", "compiles PyTorch code the lint cannot see (torch._dynamo)"),
    ("torch._inductor", "no_dynamic_code", "generates kernels from PyTorch code (torch._inductor)"),
    ("torch.export", "no_dynamic_code", "traces PyTorch code the lint cannot see (torch.export)"),
    ("torch.utils.cpp_extension", "no_dynamic_code", "builds C++/CUDA extensions: compute outside Triton"),
    ("torch.cuda.jiterator", "no_dynamic_code", "compiles CUDA code at run time (jiterator): compute outside Triton"),
    ("builtins.exec", "no_dynamic_code", "exec() runs code built at run time, which the lint cannot check"),
    ("builtins.eval", "no_dynamic_code", "eval() runs code built at run time, which the lint cannot check"),
    ("builtins.compile", "no_dynamic_code", "compile() builds code at run time, which the lint cannot check"),
    ("builtins.__import__", "no_dynamic_code", "__import__() imports a module chosen at run time"),
    ("types.FunctionType", "no_dynamic_code", "builds a function from a code object at run time"),
    ("types.CodeType", "no_dynamic_code", "builds a code object at run time"),
    ("marshal", "no_dynamic_code", "loads code objects (marshal)"),
    ("pickle.loads", "no_dynamic_code", "unpickling can run arbitrary code"),
    ("dill", "no_dynamic_code", "unpickling can run arbitrary code (dill)"),
    ("ctypes", "no_dynamic_code", "calls native code (ctypes): compute outside Triton"),
    ("cffi", "no_dynamic_code", "calls native code (cffi): compute outside Triton"),
    ("cupy", "no_dynamic_code", "runs GPU code outside Triton (cupy)"),
    ("pycuda", "no_dynamic_code", "runs GPU code outside Triton (pycuda)"),
    ("numba", "no_dynamic_code", "compiles kernels outside Triton (numba)"),
    ("torch.cuda.Stream", "no_side_streams_or_threads", "creates a side stream; work there escapes timing on the current stream"),
    ("torch.cuda.stream", "no_side_streams_or_threads", "switches to another stream; work there escapes timing on the current stream"),
    ("torch.cuda.set_stream", "no_side_streams_or_threads", "switches the current stream"),
    ("torch.cuda.ExternalStream", "no_side_streams_or_threads", "uses a side stream"),
    ("torch.cuda.StreamContext", "no_side_streams_or_threads", "switches to another stream"),
    ("torch.cuda.streams", "no_side_streams_or_threads", "uses stream objects directly"),
    ("torch.Stream", "no_side_streams_or_threads", "creates a side stream"),
    ("torch.npu.Stream", "no_side_streams_or_threads", "creates a side stream"),
    ("torch.npu.stream", "no_side_streams_or_threads", "switches to another stream"),
    ("torch.npu.set_stream", "no_side_streams_or_threads", "switches the current stream"),
    ("torch_npu.npu.Stream", "no_side_streams_or_threads", "creates a side stream"),
    ("torch_npu.npu.stream", "no_side_streams_or_threads", "switches to another stream"),
    ("torch.cuda.graph", "no_side_streams_or_threads", "captures a CUDA graph (on a side stream) to replay later"),
    ("torch.cuda.graphs", "no_side_streams_or_threads", "captures a CUDA graph to replay later"),
    ("torch.cuda.CUDAGraph", "no_side_streams_or_threads", "captures a CUDA graph to replay later"),
    ("torch.cuda.make_graphed_callables", "no_side_streams_or_threads", "captures CUDA graphs to replay later"),
    ("torch.multiprocessing", "no_side_streams_or_threads", "runs work in other processes"),
    ("threading", "no_side_streams_or_threads", "runs work on another thread, which the timing misses"),
    ("_thread", "no_side_streams_or_threads", "runs work on another thread, which the timing misses"),
    ("concurrent", "no_side_streams_or_threads", "runs work in a thread or process pool, which the timing misses"),
    ("multiprocessing", "no_side_streams_or_threads", "runs work in other processes, which the timing misses"),
    ("asyncio", "no_side_streams_or_threads", "runs work asynchronously, which the timing misses"),
    ("subprocess", "no_side_streams_or_threads", "runs other programs"),
    ("os.fork", "no_side_streams_or_threads", "forks the process"),
    ("os.forkpty", "no_side_streams_or_threads", "forks the process"),
    ("os.system", "no_side_streams_or_threads", "runs other programs"),
    ("os.popen", "no_side_streams_or_threads", "runs other programs"),
    ("os.register_at_fork", "no_side_streams_or_threads", "hooks process forks"),
    ("sys.modules", "no_reference_use", "looks modules up by name at run time, the reference's included"),
    ("sys._getframe", "no_reference_use", "inspects the caller's frames, where the reference and its outputs live"),
    ("inspect.currentframe", "no_reference_use", "inspects the caller's frames, where the reference and its outputs live"),
    ("inspect.stack", "no_reference_use", "inspects the caller's frames, where the reference and its outputs live"),
    ("inspect.getouterframes", "no_reference_use", "inspects the caller's frames"),
    ("inspect.trace", "no_reference_use", "inspects frames"),
    ("gc.get_objects", "no_reference_use", "walks every live object, the reference model and its outputs included"),
    ("gc.get_referrers", "no_reference_use", "walks live objects, the reference model and its outputs included"),
    ("gc.get_referents", "no_reference_use", "walks live objects"),
    ("operator.attrgetter", "no_dynamic_lookup", "looks attributes up by string, hiding the name from the lint"),
    ("operator.methodcaller", "no_dynamic_lookup", "calls a method named by a string, hiding it from the lint"),
    ("builtins.globals", "no_dynamic_lookup", "globals() looks names up by string, hiding them from the lint"),
    ("builtins.locals", "no_dynamic_lookup", "locals() looks names up by string, hiding them from the lint"),
    ("torch.set_default_dtype", "no_timer_tampering", "changes a global default the reference shares"),
    ("torch.set_default_tensor_type", "no_timer_tampering", "changes a global default the reference shares"),
    ("torch.set_default_device", "no_timer_tampering", "changes a global default the reference shares"),
    ("torch.set_float32_matmul_precision", "no_timer_tampering", "changes the reference's matmul precision (global)"),
    ("torch.set_flush_denormal", "no_timer_tampering", "changes global float behaviour the reference shares"),
    ("torch.nn.modules.module.register_module_forward_hook", "no_timer_tampering", "installs a global hook on every module's forward, the reference's included"),
    ("torch.nn.modules.module.register_module_forward_pre_hook", "no_timer_tampering", "installs a global hook on every module's forward, the reference's included"),
    ("unittest.mock", "no_timer_tampering", "patches objects at run time (timers, torch)"),
    ("mock", "no_timer_tampering", "patches objects at run time (timers, torch)"),
]
IMPORTLIB_CALLS = {"importlib.import_module", "importlib.util.spec_from_file_location",
                   "importlib.util.module_from_spec", "importlib.machinery.SourceFileLoader",
                   "importlib.reload", "importlib.__import__", "runpy.run_path", "runpy.run_module",
                   "imp.load_source", "imp.load_module"}
# Roots whose attributes an implementation must never assign.
TAMPER_ROOTS = {"time", "timeit", "torch", "torch_npu", "triton", "builtins", "numpy", "sys"}
TIMER_PATHS = ("time.", "timeit.", "torch.cuda.Event", "torch.cuda.synchronize", "torch.npu.Event",
               "torch.npu.synchronize", "torch.cuda.Event", "triton.testing", "torch.utils.benchmark",
               "torch.profiler", "torch.cuda.current_stream", "torch.cuda.default_stream")
DYNAMIC_DUNDERS = {"__dict__", "__getattribute__", "__getattr__"}
CONVENTIONAL_NAMES = {"F": "torch.nn.functional", "nn": "torch.nn", "tl": "triton.language",
                      "np": "numpy"}
GETATTR_TORCH_METADATA = TORCH_VALUES

# --- kernel side (triton.language) ---
TL_INDEX = {"program_id", "num_programs", "arange", "zeros", "zeros_like", "full", "cdiv",
            "make_block_ptr", "advance", "make_tensor_descriptor", "static_range", "range",
            "constexpr", "static_assert", "device_assert", "debug_barrier", "static_print",
            "device_print", "assume", "multiple_of", "max_contiguous", "max_constancy",
            "num_warps", "inline_asm_elementwise_index_only"}
TL_DATA_MOVEMENT = {"trans", "permute", "reshape", "view", "broadcast_to", "broadcast",
                    "expand_dims", "ravel", "join", "split", "interleave", "cat", "cast",
                    "flip", "swizzle2d"}
TL_RANDOM = {"rand", "randn", "randint", "randint4x", "rand4x", "randn4x", "philox"}
VALUE_METHODS_DATA_MOVEMENT = {"to", "trans", "reshape", "view", "permute", "broadcast_to",
                               "expand_dims", "ravel", "cast", "T", "split"}
VALUE_METADATA_ATTRS = {"dtype", "shape", "type", "numel", "element_ty", "ndim"}

NONE, LOADED, COMPUTED = 0, 1, 2  # taint of a kernel value: constant/index, data, computed data

# --------------------------------------------------------------------------------------------
# Symbols and scopes
# --------------------------------------------------------------------------------------------


class Ref:
    """What an expression may denote: kind in path (a dotted module path), func (a def or
    lambda), kernel (a jit def), kernel_run, kernel_launcher, class, instance, self, super,
    selfattr, param, passthrough (a decorator factory)."""
    __slots__ = ("kind", "value", "via")

    def __init__(self, kind, value, via=None):
        self.kind, self.value, self.via = kind, value, via

    def routed(self, via):
        return self if self.via is not None or via is None else Ref(self.kind, self.value, via)


class Binding:
    __slots__ = ("kind", "value", "line")

    def __init__(self, kind, value, line):
        self.kind, self.value, self.line = kind, value, line


class Scope:
    def __init__(self, kind, node, outer, cls=None):
        self.kind, self.node, self.outer, self.cls = kind, node, outer, cls
        self.bindings = {}
        self.params = {}         # name -> default expression or None
        self.param_order = []    # positional parameters, in order
        self.self_name = None
        self.self_kind = None    # "self" or "class"

    def bind(self, name, kind, value, line):
        self.bindings.setdefault(name, []).append(Binding(kind, value, line))


class ClassInfo:
    def __init__(self, node, scope):
        self.node, self.name, self.scope = node, node.name, scope
        self.def_scope = scope.outer
        self.self_attrs = {}     # name -> [(value, scope, line)]
        self.bases = None        # resolved lazily

    def __repr__(self):
        return f"<class {self.name}>"


def _dotted(path, *more):
    return ".".join([path, *more])


def _path_matches(path, prefix):
    return path == prefix or path.startswith(prefix + ".")


def _root(path):
    return path.split(".", 1)[0]


def _unparse(node, limit=80):
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001 - a display string only
        text = type(node).__name__
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _shown(text, path):
    """The source text of a name, with the path it resolves to when the name hides it."""
    return text if text.rsplit(".", 1)[-1] == path.rsplit(".", 1)[-1] else f"{text} ({path})"


def _const_str(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _fold_str(node, depth=0):
    """The string a simple string expression builds ('mat' + 'mul', f-strings of constants,
    ''.join([...]), slicing), or None."""
    if depth > 20:
        return None
    s = _const_str(node)
    if s is not None:
        return s
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        a, b = _fold_str(node.left, depth + 1), _fold_str(node.right, depth + 1)
        return a + b if a is not None and b is not None else None
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.FormattedValue):
                v = v.value
            p = _fold_str(v, depth + 1)
            if p is None:
                return None
            parts.append(p)
        return "".join(parts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        base = _fold_str(node.func.value, depth + 1)
        if base is None:
            return None
        if node.func.attr == "join" and len(node.args) == 1 and isinstance(node.args[0], (ast.List, ast.Tuple)):
            parts = [_fold_str(e, depth + 1) for e in node.args[0].elts]
            return base.join(parts) if all(p is not None for p in parts) else None
        if node.func.attr in ("lower", "upper", "strip") and not node.args:
            return getattr(base, node.func.attr)()
        if node.func.attr == "replace" and len(node.args) == 2:
            a, b = _fold_str(node.args[0], depth + 1), _fold_str(node.args[1], depth + 1)
            return base.replace(a, b) if a is not None and b is not None else None
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
        base = _fold_str(node.value, depth + 1)
        bounds = []
        for part in (node.slice.lower, node.slice.upper, node.slice.step):
            if part is None:
                bounds.append(None)
            elif isinstance(part, ast.Constant) and isinstance(part.value, int):
                bounds.append(part.value)
            elif (isinstance(part, ast.UnaryOp) and isinstance(part.op, ast.USub)
                  and isinstance(part.operand, ast.Constant) and isinstance(part.operand.value, int)):
                bounds.append(-part.operand.value)
            else:
                return None
        if base is None or bounds[2] == 0:
            return None
        return base[slice(*bounds)]
    return None


def _is_jit_path(path):
    return path in ("triton.jit", "triton.runtime.jit", "triton.runtime.jit.jit") or (
        path.startswith("triton.") and path.endswith(".jit"))


def _is_tuner_path(path):
    return path.startswith("triton.") and path.rsplit(".", 1)[-1] in ("autotune", "heuristics")


def _is_main_guard(stmt):
    if not isinstance(stmt, ast.If) or stmt.orelse:
        return False
    t = stmt.test
    return (isinstance(t, ast.Compare) and len(t.ops) == 1 and isinstance(t.ops[0], ast.Eq)
            and isinstance(t.left, ast.Name) and t.left.id == "__name__"
            and _const_str(t.comparators[0]) == "__main__")


def _op_name(filename):
    """softmax_triton_impl.py / softmax_triton_ascend_impl.py -> softmax."""
    m = re.match(r"^(.+?)_triton(?:_[A-Za-z0-9]+)*_impl\.py$", os.path.basename(filename or ""))
    return m.group(1) if m else None


def _classify_path(path):
    """(check, reason) for a module path the module-wide checks forbid, or None."""
    parts = path.split(".")
    if _root(path) in ("torch", "torch_npu", "triton") and any(p in DYNAMIC_DUNDERS for p in parts[1:]):
        return "no_dynamic_lookup", f"{path} looks torch attributes up by string, hiding them from the lint"
    if path.startswith("torch.") and parts[1].startswith("_foreach_"):
        return "no_aten_ops", f"{path} is a fused torch kernel (torch._foreach_*)"
    if path.startswith("os.") and (parts[1].startswith("spawn") or parts[1].startswith("exec")
                                   or parts[1].startswith("posix_spawn")):
        return "no_side_streams_or_threads", f"{path} runs other programs"
    for prefix, check, reason in PATH_RULES:
        if _path_matches(path, prefix):
            return check, reason
    return None


def _torch_compute_reason(path):
    """Why calling `path` is PyTorch compute, or None (allowed, a value, or another check's)."""
    root = _root(path)
    if root not in ("torch", "torch_npu"):
        return None
    if _classify_path(path) is not None or path in ALLOWED_TORCH_CALLS:
        return None
    parts = path.split(".")
    if root == "torch_npu":
        if len(parts) > 1 and parts[1].startswith("npu_"):
            return f"{path} is a fused CANN operator: the computation is outsourced"
        return None
    if len(parts) == 1:
        return None
    if _path_matches(path, "torch.nn.functional"):
        return None if len(parts) == 3 else f"{path} is PyTorch compute (torch.nn.functional)"
    if parts[1] in ("cuda", "npu", "backends", "version", "__version__", "amp", "cpu", "autograd",
                    "types", "distributed", "mps", "xpu"):
        return None
    if parts[1] == "Tensor" and (len(parts) == 2 or parts[2] in ALLOWED_TENSOR_METHODS):
        return None
    if len(parts) == 2 and parts[1] in TORCH_VALUES:
        return None
    if parts[1] == "nn":
        if len(parts) == 2 or parts[2] in NN_HOLDERS or parts[2] in ("init", "utils", "modules", "parameter"):
            return None if len(parts) <= 3 or parts[2] != "init" else f"{path} initialises a tensor with PyTorch compute"
        return f"{path} is a PyTorch layer"
    if parts[1] in ("linalg", "fft", "special") and len(parts) == 2:
        return None
    return f"{path} is PyTorch compute"


def _nn_layer_reason(path):
    if path in SDPA:
        return f"{path} is PyTorch attention (forbidden anywhere in the file)"
    parts = path.split(".")
    if (len(parts) >= 3 and parts[0] == "torch" and parts[1] == "nn" and parts[2][:1].isupper()
            and parts[2] not in NN_HOLDERS):
        return f"constructs the PyTorch layer {path} (forbidden anywhere in the file)"
    return None


# --------------------------------------------------------------------------------------------
# The analysis
# --------------------------------------------------------------------------------------------


class _Analysis:
    def __init__(self, tree, filename, non_compute):
        self.tree = tree
        self.filename = filename
        self.non_compute = non_compute
        self.op = _op_name(filename)
        self.enclosing = {}      # node -> Scope it is evaluated in
        self.scope_of = {}       # def / lambda / class node -> its own Scope
        self.classes = {}        # ClassDef -> ClassInfo
        self.star_imports = []   # (module, line)
        self.kernel_nodes = set()
        self.parents = {}
        self._resolved = {}
        self._steps = 0
        self.violations = {name: [] for name in VIOLATION_CHECKS}
        self._seen_violations = set()
        self.module = Scope("module", tree, None)
        for stmt in tree.body:
            self._visit(stmt, self.module)
        for parent in ast.walk(tree):
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
        self.docstrings = self._docstrings()
        self._find_kernels()
        self._resolved.clear()  # answers cached before every kernel was known

    # ---- building scopes -------------------------------------------------------------------

    def _visit(self, node, scope):
        self.enclosing[node] = scope
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope.bind(node.name, "def", node, node.lineno)
            for d in node.decorator_list:
                self._visit(d, scope)
            self._visit(node.args, scope)
            if node.returns is not None:
                self._visit(node.returns, scope)
            fscope = self._function_scope(node, scope)
            for stmt in node.body:
                self._visit(stmt, fscope)
            return
        if isinstance(node, ast.Lambda):
            self._visit(node.args, scope)
            self._visit(node.body, self._function_scope(node, scope))
            return
        if isinstance(node, ast.ClassDef):
            for e in node.decorator_list + node.bases + [k.value for k in node.keywords]:
                self._visit(e, scope)
            lexical = scope if scope.kind != "class" else scope.outer
            cscope = Scope("class", node, lexical)
            info = ClassInfo(node, cscope)
            info.def_scope = scope
            cscope.cls = info
            self.classes[node] = info
            self.scope_of[node] = cscope
            scope.bind(node.name, "class", info, node.lineno)
            for stmt in node.body:
                self._visit(stmt, cscope)
            return
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    scope.bind(alias.asname, "import", alias.name, node.lineno)
                else:
                    top = alias.name.split(".")[0]
                    scope.bind(top, "import", top, node.lineno)
        elif isinstance(node, ast.ImportFrom):
            module = "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*":
                    self.star_imports.append((module, node.lineno))
                    continue
                path = f"{module}.{alias.name}" if module and not module.endswith(".") else module + alias.name
                scope.bind(alias.asname or alias.name, "import", path, node.lineno)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                self._bind_target(target, node.value, scope, node.lineno)
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            self._bind_target(node.target, node.value, scope, node.lineno)
        elif isinstance(node, ast.NamedExpr):
            self._bind_target(node.target, node.value, scope, node.lineno)
        for child in ast.iter_child_nodes(node):
            self._visit(child, scope)

    def _function_scope(self, node, scope):
        lexical = scope if scope.kind != "class" else scope.outer
        cls = scope.cls if scope.kind == "class" else None
        fscope = Scope("function", node, lexical, cls)
        self.scope_of[node] = fscope
        args = node.args
        positional = args.posonlyargs + args.args
        defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
        for a, d in zip(positional, defaults):
            fscope.params[a.arg] = d
            fscope.param_order.append(a.arg)
        for a, d in zip(args.kwonlyargs, args.kw_defaults):
            fscope.params[a.arg] = d
        for a in (args.vararg, args.kwarg):
            if a is not None:
                fscope.params[a.arg] = None
        if cls is not None and positional:
            decorators = {_unparse(d) for d in getattr(node, "decorator_list", [])}
            if "staticmethod" not in decorators:
                fscope.self_name = positional[0].arg
                fscope.self_kind = "class" if "classmethod" in decorators else "self"
        return fscope

    def _bind_target(self, target, value, scope, line):
        if isinstance(target, ast.Name):
            scope.bind(target.id, "expr", value, line)
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)) \
                and len(target.elts) == len(value.elts):
            for t, v in zip(target.elts, value.elts):
                self._bind_target(t, v, scope, line)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            s = scope
            if s.kind == "function" and s.cls is not None and target.value.id == s.self_name:
                s.cls.self_attrs.setdefault(target.attr, []).append((value, s, line))

    def _docstrings(self):
        ids = set()
        for node in ast.walk(self.tree):
            body = getattr(node, "body", None)
            if isinstance(body, list):
                for stmt in body:
                    if isinstance(stmt, ast.Expr) and _const_str(stmt.value) is not None:
                        ids.add(stmt.value)
        return ids

    def _find_kernels(self):
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    target = d.func if isinstance(d, ast.Call) else d
                    if any(r.kind == "path" and _is_jit_path(r.value)
                           for r in self.resolve(target, self.enclosing[d])):
                        self.kernel_nodes.add(node)
        for node in ast.walk(self.tree):  # kernel = triton.jit(fn), triton.jit(**kw)(fn)
            if isinstance(node, ast.Call) and node.args:
                scope = self.enclosing.get(node, self.module)
                func = node.func.func if isinstance(node.func, ast.Call) else node.func
                if any(r.kind == "path" and _is_jit_path(r.value) for r in self.resolve(func, scope)):
                    for r in self.resolve(node.args[0], scope):
                        if r.kind == "func" and isinstance(r.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self.kernel_nodes.add(r.value)

    # ---- resolution ------------------------------------------------------------------------

    def resolve(self, expr, scope, seen=frozenset(), depth=0):
        """The Refs `expr` may denote (flow-insensitive; an over-approximation). Top-level
        answers are cached; a step budget bounds pathological alias chains."""
        if depth == 0 and not seen:
            key = (id(expr), id(scope))
            if key not in self._resolved:
                self._steps = 0
                self._resolved[key] = self._resolve(expr, scope, seen, 1)
            return self._resolved[key]
        return self._resolve(expr, scope, seen, depth)

    def _resolve(self, expr, scope, seen, depth):
        self._steps += 1
        if depth > 16 or expr is None or self._steps > 20000:
            return []
        if isinstance(expr, ast.Name):
            return self._resolve_name(expr.id, scope, seen, depth)
        if isinstance(expr, ast.Attribute):
            out = []
            for base in self.resolve(expr.value, scope, seen, depth + 1):
                out.extend(self._member(base, expr.attr, seen, depth))
            return out
        if isinstance(expr, ast.Call):
            return self._resolve_call(expr, scope, seen, depth)
        if isinstance(expr, ast.Lambda):
            return [Ref("func", expr)]
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return [r for e in expr.elts for r in self.resolve(e, scope, seen, depth + 1)]
        if isinstance(expr, ast.Dict):
            return [r for e in expr.values if e is not None for r in self.resolve(e, scope, seen, depth + 1)]
        if isinstance(expr, ast.Subscript):
            out = []
            for r in self.resolve(expr.value, scope, seen, depth + 1):
                out.append(Ref("kernel_launcher", r.value, r.via) if r.kind == "kernel" else r)
            return [r for r in out if r.kind not in ("path", "self", "class", "instance", "param")
                    or r.via is not None or isinstance(expr.value, (ast.List, ast.Tuple, ast.Dict))]
        if isinstance(expr, ast.IfExp):
            return self.resolve(expr.body, scope, seen, depth + 1) + self.resolve(expr.orelse, scope, seen, depth + 1)
        if isinstance(expr, ast.BoolOp):
            return [r for v in expr.values for r in self.resolve(v, scope, seen, depth + 1)]
        if isinstance(expr, (ast.NamedExpr, ast.Starred, ast.Await)):
            return self.resolve(expr.value, scope, seen, depth + 1)
        return []

    def _resolve_name(self, name, scope, seen, depth):
        s = scope
        while s is not None:
            if name in s.bindings:
                key = (name, id(s))
                if key in seen:
                    return []
                seen = seen | {key}
                out = []
                for b in s.bindings[name]:
                    out.extend(self._binding_refs(name, b, s, seen, depth))
                return out
            if s.kind == "function" and name in s.params:
                if name == s.self_name:
                    return [Ref(s.self_kind, s.cls)]
                refs = [Ref("param", (s.node, name))]
                default = s.params[name]
                if default is not None:
                    via = f"default argument '{name}' (line {default.lineno})"
                    refs += [r.routed(via) for r in self.resolve(default, self.enclosing[default], seen, depth + 1)]
                return refs
            s = s.outer
        if hasattr(builtins, name):
            return [Ref("path", "builtins." + name)]
        if name in CONVENTIONAL_NAMES:
            return [Ref("path", CONVENTIONAL_NAMES[name])]
        if self.star_imports:
            module, line = self.star_imports[0]
            return [Ref("path", _dotted(module, name), f"star import from {module} (line {line})")]
        return []

    def _binding_refs(self, name, b, scope, seen, depth):
        if b.kind == "import":
            return [Ref("path", b.value)]
        if b.kind == "def":
            return [Ref("kernel" if b.value in self.kernel_nodes else "func", b.value)]
        if b.kind == "class":
            return [Ref("class", b.value)]
        where = {"module": "module-level alias", "class": "class attribute", "function": "local alias"}[scope.kind]
        via = f"{where} '{name}' (line {b.line})"
        refs = self.resolve(b.value, scope, seen, depth + 1)
        return [r.routed(via) if r.kind in ("path", "func") else r for r in refs]

    def _mro(self, info, seen=None):
        seen = seen or set()
        if info in seen:
            return []
        seen.add(info)
        if info.bases is None:
            info.bases = []
            for b in info.node.bases:
                for r in self.resolve(b, info.def_scope):
                    if r.kind == "class":
                        info.bases.append(r.value)
        out = [info]
        for base in info.bases:
            out += [c for c in self._mro(base, seen) if c not in out]
        return out

    def _class_member(self, info, attr, seen, depth, skip_self=False, instance=True):
        """Refs for info.attr (methods, class attributes, self attributes), or None if absent."""
        for c in self._mro(info)[1 if skip_self else 0:]:
            key = ("member", id(c), attr)
            if key in seen:
                return []
            seen = seen | {key}
            for b in c.scope.bindings.get(attr, []):
                if b.kind == "def":
                    return [Ref("kernel" if b.value in self.kernel_nodes else "func", b.value)]
            if attr in c.scope.bindings:
                return [r for b in c.scope.bindings[attr] for r in self._binding_refs(attr, b, c.scope, seen, depth + 1)]
            if instance and attr in c.self_attrs:
                out = []
                for value, s, line in c.self_attrs[attr]:
                    via = f"attribute self.{attr} (line {line})"
                    out += [r.routed(via) if r.kind in ("path", "func") else r
                            for r in self.resolve(value, s, seen, depth + 1)]
                return out
        return None

    def _member(self, base, attr, seen, depth):
        if base.kind == "path":
            return [Ref("path", _dotted(base.value, attr), base.via)]
        if base.kind in ("self", "instance", "class", "super"):
            info = base.value
            if info is None:
                return []
            if base.kind == "class" and attr == "apply":
                found = self._class_member(info, "forward", seen, depth, instance=False)
                if found:
                    return found
            found = self._class_member(info, attr, seen, depth, skip_self=base.kind == "super",
                                       instance=base.kind != "class")
            if found:
                return found
            return [Ref("selfattr", attr)] if base.kind == "self" else []
        if base.kind == "kernel":
            if attr == "run":
                return [Ref("kernel_run", base.value, base.via)]
            if attr == "warmup":
                return [Ref("kernel_warmup", base.value, base.via)]
        return []

    def _resolve_call(self, call, scope, seen, depth):
        out = []
        for r in self.resolve(call.func, scope, seen, depth + 1):
            if r.kind == "path":
                p = r.value
                if p == "builtins.getattr" and len(call.args) >= 2 and _const_str(call.args[1]) is not None:
                    for base in self.resolve(call.args[0], scope, seen, depth + 1):
                        out += self._member(base, _const_str(call.args[1]), seen, depth)
                elif p in ("functools.partial", "functools.partialmethod") and call.args:
                    via = f"functools.partial (line {call.lineno})"
                    out += [x.routed(via) for x in self.resolve(call.args[0], scope, seen, depth + 1)]
                elif p in ("builtins.staticmethod", "builtins.classmethod", "builtins.property") and call.args:
                    out += self.resolve(call.args[0], scope, seen, depth + 1)
                elif p == "builtins.super":
                    s = scope
                    while s is not None and s.cls is None:
                        s = s.outer
                    if s is not None:
                        out.append(Ref("super", s.cls))
                elif (_is_jit_path(p) or _is_tuner_path(p)):
                    if call.args:
                        out += self.resolve(call.args[0], scope, seen, depth + 1)
                    else:
                        out.append(Ref("passthrough", p))
            elif r.kind == "passthrough" and call.args:
                out += self.resolve(call.args[0], scope, seen, depth + 1)
            elif r.kind == "class":
                out.append(Ref("instance", r.value, r.via))
        return out

    # ---- reporting -------------------------------------------------------------------------

    def report(self, check, line, call, reason):
        key = (check, line, call)
        if key in self._seen_violations:
            return
        self._seen_violations.add(key)
        self.violations[check].append({"line": line, "call": call, "reason": reason})

    def _hidden_context(self, node, fn):
        """Why a node inside fn is hidden (a lambda, a default argument), or None."""
        if isinstance(fn, ast.Lambda):
            return f"inside a lambda (line {fn.lineno})"
        cur = self.parents.get(node)
        while cur is not None and cur is not fn:
            if isinstance(cur, ast.Lambda):
                return f"inside a lambda (line {cur.lineno})"
            if isinstance(cur, ast.arguments):
                return "in a default argument"
            cur = self.parents.get(cur)
        return None

    def _getattr_display(self, call):
        args = ", ".join(_unparse(a, 40) for a in call.args[:2])
        text = f"getattr({args})"
        if len(call.args) >= 2 and _const_str(call.args[1]) is None:
            folded = _fold_str(call.args[1])
            if folded is not None:
                text += f" = {folded!r}"
        return text

    # ---- module-wide checks ----------------------------------------------------------------

    def _is_chain_top(self, node):
        parent = self.parents.get(node)
        return not (isinstance(parent, ast.Attribute) and parent.value is node)

    def _is_torchish(self, refs, roots=("torch", "torch_npu", "triton")):
        return any(r.kind == "path" and _root(r.value) in roots for r in refs)

    def _reference_like(self, module):
        last = module.rstrip(".").split(".")[-1]
        if last == "__main__":
            return True
        return last.endswith("_torch") or (self.op is not None and last in (self.op, self.op + "_torch"))

    def check_module(self):
        for node in ast.walk(self.tree):
            scope = self.enclosing.get(node, self.module)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._check_import(node)
            elif isinstance(node, (ast.Name, ast.Attribute)) and self._is_chain_top(node):
                if isinstance(node.ctx, ast.Load):
                    self._check_reference_path(node, scope)
            elif isinstance(node, ast.Call):
                self._check_call_module_wide(node, scope)
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                self._check_tamper_targets(node, scope)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in (
                    "__torch_function__", "__torch_dispatch__"):
                self.report("no_aten_ops", node.lineno, f"def {node.name}",
                            "intercepts torch calls on tensors (a tensor subclass), which can fake or defer outputs")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node not in self.docstrings:
                s = node.value
                if s.endswith("_torch.py") or (self.op is not None and s in (self.op + "_torch", self.op + "_torch.py")):
                    self.report("no_reference_use", node.lineno, repr(s)[:80],
                                "names the reference task file; the implementation must not load the reference")
        for module, line in self.star_imports:
            if _root(module) in ("torch", "torch_npu"):
                self.report("no_hidden_torch_compute", line, f"from {module} import *",
                            "a star import makes torch functions callable by bare names the lint cannot attribute")

    def _check_import(self, node):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
            text = "import " + ", ".join(names)
        else:
            module = "." * node.level + (node.module or "")
            text = f"from {module} import " + ", ".join(a.name for a in node.names)
            names = [module] + [f"{module}.{a.name}" if module and not module.endswith(".") else module + a.name
                                for a in node.names if a.name != "*"]
            if any(a.name == "Model" for a in node.names):
                self.report("no_reference_use", node.lineno, _unparse(node),
                            "imports Model, the reference's class name: the implementation must not use the reference")
        for name in names:
            if not name.strip("."):
                continue
            if self._reference_like(name):
                self.report("no_reference_use", node.lineno, text[:80],
                            f"imports {name}, the reference task module (or the verifier's __main__)")
                continue
            found = _classify_path(name.lstrip("."))
            if found is not None and found[0] not in ("no_timer_tampering",) or (
                    found is not None and name.split(".")[0] in ("unittest", "mock")):
                self.report(found[0], node.lineno, text[:80], f"imports {name}: {found[1]}")

    def _check_reference_path(self, node, scope):
        parent = self.parents.get(node)
        if isinstance(node, ast.Attribute) and node.attr in DYNAMIC_DUNDERS:
            if self._is_torchish(self.resolve(node.value, scope)):
                self.report("no_dynamic_lookup", node.lineno, _unparse(node),
                            f"{node.attr} on a torch/triton namespace looks attributes up by string, hiding them from the lint")
                return
        is_call = isinstance(parent, ast.Call) and parent.func is node
        for r in self.resolve(node, scope):
            if r.kind != "path":
                continue
            if r.value in IMPORTLIB_CALLS:
                if not is_call:
                    self.report("no_dynamic_lookup", node.lineno, _unparse(node),
                                f"{r.value} imports modules chosen at run time")
                continue
            found = _classify_path(r.value)
            if found is not None:
                self.report(found[0], node.lineno, _shown(_unparse(node), r.value), found[1])
                return

    def _check_call_module_wide(self, call, scope):
        refs = self.resolve(call.func, scope)
        paths = {r.value for r in refs if r.kind == "path"}
        func_text = _unparse(call.func)
        if "builtins.getattr" in paths and len(call.args) >= 2:
            target = self.resolve(call.args[0], scope)
            attr = _const_str(call.args[1])
            if self._is_torchish(target):
                if attr is None:
                    self.report("no_dynamic_lookup", call.lineno, self._getattr_display(call),
                                "getattr with a computed name on a torch/triton namespace hides which function is called")
                else:
                    for r in target:
                        if r.kind == "path" and _root(r.value) in ("torch", "torch_npu"):
                            full = _dotted(r.value, attr)
                            if attr not in GETATTR_TORCH_METADATA and (
                                    _torch_compute_reason(full) or _classify_path(full) or _nn_layer_reason(full)):
                                self.report("no_dynamic_lookup", call.lineno, self._getattr_display(call),
                                            f"getattr hides {full} from the name checks")
                                break
        if paths & {"builtins.setattr", "builtins.delattr"} and call.args:
            for r in self.resolve(call.args[0], scope):
                if r.kind == "path" and _root(r.value) in TAMPER_ROOTS:
                    self.report("no_timer_tampering", call.lineno, _unparse(call),
                                f"{func_text} on {r.value} monkey-patches it; timers and the reference would see the replacement")
                    break
        if paths & {"builtins.vars", "builtins.dir"} and call.args:
            if self._is_torchish(self.resolve(call.args[0], scope)):
                self.report("no_dynamic_lookup", call.lineno, _unparse(call),
                            "lists a torch/triton namespace to look functions up by string")
        for p in paths & IMPORTLIB_CALLS:
            arg = _fold_str(call.args[0]) if call.args else None
            shown = _unparse(call)
            if arg is not None and (self._reference_like(arg.replace(".py", "").replace("/", "."))
                                    or arg.endswith("_torch.py")):
                self.report("no_reference_use", call.lineno, shown, f"{p} loads the reference task module")
            elif arg is not None and _root(arg) in ("torch", "torch_npu", "triton"):
                self.report("no_dynamic_lookup", call.lineno, shown,
                            f"{p} aliases {arg} through importlib, hiding the torch names used")
            else:
                self.report("no_dynamic_lookup", call.lineno, shown,
                            f"{p} imports a module chosen at run time; the reference cannot be ruled out")
        name_called = (call.func.id if isinstance(call.func, ast.Name)
                       else call.func.attr if isinstance(call.func, ast.Attribute) else None)
        if name_called == "Model":
            local = any(r.kind == "class" for r in refs)
            self.report("no_reference_use", call.lineno, func_text,
                        "instantiates a class named Model, the reference's name" + (
                            " (a copy of the reference in this file)" if local else ""))
        if isinstance(call.func, ast.Attribute) and call.func.attr in HOOK_REGISTRARS:
            pass  # hook functions become entries of the reachability walk (see entries())
        for p in paths:
            reason = _nn_layer_reason(p)
            if reason is not None:
                self.report("no_forbidden_torch_ops", call.lineno, _shown(func_text, p), reason)

    def _check_tamper_targets(self, node, scope):
        targets = list(node.targets) if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        flat = []
        while targets:
            t = targets.pop()
            if isinstance(t, (ast.Tuple, ast.List)):
                targets.extend(t.elts)
            else:
                flat.append(t)
        for t in flat:
            base = None
            if isinstance(t, ast.Attribute):
                base = t
            elif isinstance(t, ast.Subscript):
                base = t.value
            if base is None:
                continue
            for r in self.resolve(base, scope):
                if r.kind == "path" and _root(r.value) in TAMPER_ROOTS and r.value not in ("builtins.object",):
                    path = r.value
                    if path.startswith(TIMER_PATHS) or _root(path) in ("time", "timeit"):
                        reason = f"assigning {path} tampers with the timers the benchmark reads"
                    else:
                        reason = f"assigning {path} monkey-patches it; the reference and the timers would see the replacement"
                    self.report("no_timer_tampering", node.lineno, _unparse(t), reason)
                    break

    # ---- reachability from ModelNew.forward ------------------------------------------------

    def model_class(self):
        bindings = self.module.bindings.get("ModelNew", [])
        if not bindings:
            return None
        last = max(bindings, key=lambda b: b.line)
        if last.kind == "class":
            return last.value
        for r in self._binding_refs("ModelNew", last, self.module, frozenset(), 0):
            if r.kind in ("class", "instance"):
                return r.value
        return None

    def entries(self, info):
        out = []
        for name in ("forward", "__call__"):
            found = self._class_member(info, name, frozenset(), 0, instance=False) or []
            for r in found:
                if r.kind == "func" and not (name == "__call__" and r.value in out):
                    out.append(r.value)
                elif r.kind == "path" and _torch_compute_reason(r.value):  # forward = torch.softmax
                    self.report("no_hidden_torch_compute", info.node.lineno, f"{info.name}.{name}",
                                f"{name} is {r.value}: {_torch_compute_reason(r.value)}"
                                + (f", through {r.via}" if r.via else ""))
        for node in ast.walk(self.tree):  # forward hooks run around forward
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in HOOK_REGISTRARS and node.args):
                for r in self.resolve(node.args[0], self.enclosing[node]):
                    if r.kind == "func":
                        out.append(r.value)
        return out

    def walk_reachable(self, info):
        """Scan forward and what it reaches; returns (launches, reached functions)."""
        self.model_mro = self._mro(info)
        self.launches = {}       # kernel node -> [line]
        self.visited = set()
        self.launch_params = {}
        entry_nodes = self.entries(info)
        forward_nodes = set(entry_nodes[:2])
        queue = deque(entry_nodes)
        while queue:
            fn = queue.popleft()
            if fn in self.visited or fn in self.kernel_nodes:
                continue
            self.visited.add(fn)
            self._scan_function(fn, fn in forward_nodes and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                                and fn.name in ("forward", "__call__"), queue)
        return entry_nodes

    def _params_launched(self, fn):
        if fn not in self.launch_params:
            launched = set()
            scope = self.scope_of.get(fn)
            if scope is not None:
                for node in ast.walk(fn):
                    if not isinstance(node, ast.Call):
                        continue
                    target = None
                    if isinstance(node.func, ast.Subscript):
                        target = node.func.value
                    elif isinstance(node.func, ast.Attribute) and node.func.attr == "run":
                        target = node.func.value
                    if isinstance(target, ast.Name) and target.id in scope.params:
                        launched.add(target.id)
            self.launch_params[fn] = launched
        return self.launch_params[fn]

    def _record_launch(self, kernel, line):
        self.launches.setdefault(kernel, []).append(line)

    def _scan_function(self, fn, is_forward, queue):
        body = fn.body if isinstance(fn.body, list) else [fn.body]
        nodes = []
        for d in fn.args.defaults + [d for d in fn.args.kw_defaults if d is not None]:
            nodes.extend(ast.walk(d))
        for stmt in body:
            nodes.extend(ast.walk(stmt))
        for node in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                self.visited.add(node)
            self._scan_node(node, fn, is_forward, queue)

    def _forbidden(self, node, fn, call_text, reason, via):
        hidden = via or self._hidden_context(node, fn)
        if hidden:
            self.report("no_hidden_torch_compute", node.lineno, call_text, f"{reason}, hidden {hidden}"
                        if not via else f"{reason}, reached through {via}")
        else:
            self.report("no_forbidden_torch_ops", node.lineno, call_text, reason)

    def _scan_node(self, node, fn, is_forward, queue):
        scope = self.enclosing.get(node, self.module)
        if is_forward and isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            kind = "while" if isinstance(node, ast.While) else "for"
            self.report("no_forbidden_torch_ops", node.lineno, f"{kind} loop",
                        f"forward() may not loop on the host ({kind}); the computation belongs in one Triton kernel launch")
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)) or (
                isinstance(node, ast.AugAssign) and isinstance(node.op, ast.MatMult)):
            self._forbidden(node, fn, "@", "the @ operator is a PyTorch matrix product", None)
        if isinstance(node, ast.Call):
            self._scan_call(node, fn, is_forward, scope, queue)
        elif isinstance(node, (ast.Name, ast.Attribute)) and isinstance(node.ctx, ast.Load) and self._is_chain_top(node):
            parent = self.parents.get(node)
            if isinstance(parent, ast.Call) and parent.func is node:
                return
            if isinstance(parent, ast.Subscript) and parent.value is node:
                grand = self.parents.get(parent)
                if isinstance(grand, ast.Call) and grand.func is parent:
                    return  # a launch, handled with the call
            self._scan_reference(node, fn, scope, queue)

    def _scan_reference(self, node, fn, scope, queue):
        if isinstance(node, ast.Attribute) and node.attr in DYNAMIC_DUNDERS:
            self.report("no_dynamic_lookup", node.lineno, _unparse(node),
                        f"{node.attr} looks attributes up by string, hiding them from the lint")
        refs = self.resolve(node, scope)
        for r in refs:
            if r.kind == "path":
                reason = _torch_compute_reason(r.value)
                if reason is not None:
                    self.report("no_hidden_torch_compute", node.lineno, _shown(_unparse(node), r.value),
                                f"{reason}, passed around as a value" + (f" through {r.via}" if r.via else ""))
            elif r.kind == "func":
                queue.append(r.value)
        if not refs and isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_TENSOR_METHODS:
            self.report("no_hidden_torch_compute", node.lineno, _unparse(node),
                        f"the tensor method .{node.attr} is taken as a value to be called elsewhere")

    def _scan_call(self, call, fn, is_forward, scope, queue):
        func = call.func
        refs = self.resolve(func, scope)
        if isinstance(func, ast.Subscript):
            for r in self.resolve(func.value, scope):
                if r.kind in ("kernel", "kernel_launcher"):  # k[grid](...), table[name][grid](...)
                    self._record_launch(r.value, call.lineno)
            refs = [r for r in refs if r.kind not in ("kernel", "kernel_launcher")]  # table[name](...)
        func_text = _unparse(func)
        for r in refs:
            if r.kind == "path":
                if r.value == "builtins.getattr" and len(call.args) >= 2 and _const_str(call.args[1]) is None:
                    self.report("no_dynamic_lookup", call.lineno, self._getattr_display(call),
                                "getattr with a computed name hides which attribute is used")
                if r.value in ("builtins.getattr",) and len(call.args) >= 2 and _const_str(call.args[1]) is not None:
                    attr = _const_str(call.args[1])
                    target = self.resolve(call.args[0], scope)
                    known = any(t.kind in ("path", "class", "instance", "self") for t in target)
                    if not known and attr in FORBIDDEN_TENSOR_METHODS:
                        self.report("no_dynamic_lookup", call.lineno, self._getattr_display(call),
                                    f"getattr hides the tensor compute method .{attr}")
                reason = _torch_compute_reason(r.value)
                if reason is not None:
                    self._forbidden(call, fn, _shown(func_text, r.value), reason, r.via)
            elif r.kind == "func":
                queue.append(r.value)
                self._launches_through_params(call, r.value, scope, func)
            elif r.kind in ("kernel_run", "kernel_launcher"):
                self._record_launch(r.value, call.lineno)
            elif r.kind == "class":
                for name in ("__init__", "forward", "__call__"):
                    for m in self._class_member(r.value, name, frozenset(), 0, instance=False) or []:
                        if m.kind == "func":
                            queue.append(m.value)
            elif r.kind == "instance":
                for name in ("forward", "__call__"):
                    for m in self._class_member(r.value, name, frozenset(), 0) or []:
                        if m.kind == "func":
                            queue.append(m.value)
            elif r.kind == "selfattr" and r.value not in NN_MODULE_API:
                self.report("no_forbidden_torch_ops", call.lineno, f"{func_text}(...)",
                            f"self.{r.value}() is not a method of the class: likely an nn.Module's forward "
                            "doing the computation in PyTorch")
        if not refs and isinstance(func, ast.Attribute):
            if func.attr in FORBIDDEN_TENSOR_METHODS:
                self._forbidden(call, fn, func_text, f"the tensor method .{func.attr}() computes in PyTorch", None)
            elif func.attr in DYNAMIC_DUNDERS:
                self.report("no_dynamic_lookup", call.lineno, func_text,
                            f"{func.attr} looks attributes up by string, hiding them from the lint")
        if is_forward and isinstance(func, ast.Attribute) and func.attr == "append":
            self.report("no_forbidden_torch_ops", call.lineno, f"{func_text}(...)",
                        "forward() may not build lists with append (host-side state belongs in the kernel)")

    def _launches_through_params(self, call, callee, scope, func):
        launched = self._params_launched(callee)
        if not launched:
            return
        cscope = self.scope_of.get(callee)
        order = list(cscope.param_order)
        if cscope.self_name and isinstance(func, ast.Attribute) and order and order[0] == cscope.self_name:
            order = order[1:]
        bound = dict(zip(order, call.args))
        bound.update({k.arg: k.value for k in call.keywords if k.arg})
        for p in launched:
            if p in bound:
                for r in self.resolve(bound[p], scope):
                    if r.kind == "kernel":
                        self._record_launch(r.value, call.lineno)


# --------------------------------------------------------------------------------------------
# Kernels: does a launched kernel compute, or only move data?
# --------------------------------------------------------------------------------------------


class _KernelTaint:
    """Flow-insensitive taint over a kernel: data comes from loads; compute is arithmetic,
    comparisons or compute tl.* calls on data. A kernel computes if a store/atomic writes
    computed data (or uses a computed mask), here or in a jit function it calls."""

    def __init__(self, analysis):
        self.a = analysis
        self.memo = {}

    def summary(self, fn, arg_taints=(), depth=0):
        key = (fn, tuple(arg_taints))
        if key in self.memo:
            return self.memo[key]
        if depth > 8:
            return NONE, False
        self.memo[key] = (NONE, False)  # recursion guard
        scope = self.a.scope_of.get(fn, self.a.module)
        env = {name: t for name, t in zip(scope.param_order, arg_taints)}
        ctx = {"computes": False, "depth": depth, "scope": scope}
        body = [n for stmt in fn.body for n in ast.walk(stmt)]
        for _ in range(32):
            before = dict(env)
            for node in body:
                if isinstance(node, ast.Assign):
                    t = self.eval(node.value, env, ctx)
                    for target in node.targets:
                        self._assign(target, t, env)
                elif isinstance(node, ast.AugAssign):
                    t = self._binop(node.op, self.eval(node.target, env, ctx), self.eval(node.value, env, ctx),
                                    node.target, node.value)
                    self._assign(node.target, t, env)
                elif isinstance(node, ast.AnnAssign) and node.value is not None:
                    self._assign(node.target, self.eval(node.value, env, ctx), env)
                elif isinstance(node, ast.NamedExpr):
                    self._assign(node.target, self.eval(node.value, env, ctx), env)
                elif isinstance(node, (ast.For, ast.AsyncFor)):
                    self._assign(node.target, self.eval(node.iter, env, ctx), env)
                elif isinstance(node, ast.comprehension):
                    self._assign(node.target, self.eval(node.iter, env, ctx), env)
                elif isinstance(node, ast.withitem) and node.optional_vars is not None:
                    self._assign(node.optional_vars, self.eval(node.context_expr, env, ctx), env)
            if env == before:
                break
        ret = NONE
        for node in body:
            if isinstance(node, ast.Return) and node.value is not None:
                ret = max(ret, self.eval(node.value, env, ctx))
            elif isinstance(node, ast.Call):
                self._sink(node, env, ctx)
        result = (ret, ctx["computes"])
        self.memo[key] = result
        return result

    def _assign(self, target, t, env):
        if isinstance(target, ast.Name):
            env[target.id] = max(env.get(target.id, NONE), t)
        elif isinstance(target, (ast.Tuple, ast.List)):
            for e in target.elts:
                self._assign(e, t, env)
        elif isinstance(target, ast.Starred):
            self._assign(target.value, t, env)

    @staticmethod
    def _identity(op, const, on_right):
        if not isinstance(const, (int, float)) or isinstance(const, bool):
            return False
        if isinstance(op, (ast.Add, ast.BitOr, ast.BitXor)):
            return const == 0
        if isinstance(op, ast.Sub):
            return on_right and const == 0
        if isinstance(op, ast.Mult):
            return const == 1
        if isinstance(op, (ast.Div, ast.FloorDiv, ast.Pow)):
            return on_right and const == 1
        if isinstance(op, (ast.LShift, ast.RShift)):
            return on_right and const == 0
        return False

    def _binop(self, op, lt, rt, left, right):
        if max(lt, rt) < LOADED:
            return NONE
        if isinstance(right, ast.Constant) and self._identity(op, right.value, True):
            return lt
        if isinstance(left, ast.Constant) and self._identity(op, left.value, False):
            return rt
        return COMPUTED

    def _call_kind(self, func, ctx):
        """('tl', name) | ('jit', node) | ('method', name, receiver) | ('other', None)."""
        refs = self.a.resolve(func, self.a.enclosing.get(func, ctx["scope"]))
        for r in refs:
            if r.kind == "kernel":
                return ("jit", r.value)
            if r.kind == "path" and _root(r.value) == "triton" and ".language" in "." + r.value.split(".", 1)[-1]:
                return ("tl", r.value.rsplit(".", 1)[-1])
            if r.kind == "path" and r.value.rsplit(".", 1)[-1] == "libdevice" or (
                    r.kind == "path" and ".libdevice." in r.value):
                return ("tl", r.value.rsplit(".", 1)[-1])
        if refs:
            return ("other", None)
        if isinstance(func, ast.Attribute):
            return ("method", func.attr, func.value)
        return ("other", None)

    def eval(self, e, env, ctx):
        if e is None or isinstance(e, ast.Constant):
            return NONE
        if isinstance(e, ast.Name):
            return env.get(e.id, NONE)
        if isinstance(e, ast.BinOp):
            return self._binop(e.op, self.eval(e.left, env, ctx), self.eval(e.right, env, ctx), e.left, e.right)
        if isinstance(e, ast.UnaryOp):
            t = self.eval(e.operand, env, ctx)
            return t if isinstance(e.op, ast.UAdd) or t < LOADED else COMPUTED
        if isinstance(e, ast.BoolOp):
            return COMPUTED if max(self.eval(v, env, ctx) for v in e.values) >= LOADED else NONE
        if isinstance(e, ast.Compare):
            ts = [self.eval(v, env, ctx) for v in [e.left] + e.comparators]
            return COMPUTED if max(ts) >= LOADED else NONE
        if isinstance(e, ast.IfExp):
            if self.eval(e.test, env, ctx) >= LOADED:
                return COMPUTED
            return max(self.eval(e.body, env, ctx), self.eval(e.orelse, env, ctx))
        if isinstance(e, ast.Call):
            return self._call(e, env, ctx)
        if isinstance(e, ast.Attribute):
            return NONE if e.attr in VALUE_METADATA_ATTRS else self.eval(e.value, env, ctx)
        if isinstance(e, ast.Subscript):
            return self.eval(e.value, env, ctx)
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            return max([self.eval(v, env, ctx) for v in e.elts] or [NONE])
        if isinstance(e, (ast.Starred, ast.NamedExpr)):
            return self.eval(e.value, env, ctx)
        return NONE

    def _args(self, call):
        return list(call.args) + [k.value for k in call.keywords]

    def _arg(self, call, index, name):
        if len(call.args) > index:
            return call.args[index]
        for k in call.keywords:
            if k.arg == name:
                return k.value
        return None

    def _call(self, call, env, ctx):
        kind = self._call_kind(call.func, ctx)
        arg_ts = [self.eval(a, env, ctx) for a in self._args(call)]
        most = max(arg_ts or [NONE])
        if kind[0] == "tl":
            name = kind[1]
            if name == "load":
                return LOADED
            if name in TL_INDEX or name == "store":
                return NONE
            if name == "where":
                cond = self.eval(self._arg(call, 0, "condition"), env, ctx)
                rest = [self.eval(a, env, ctx) for a in call.args[1:3]]
                return COMPUTED if cond >= LOADED else max(rest or [NONE])
            if name in TL_DATA_MOVEMENT:
                return most
            if name.startswith("atomic_"):
                return LOADED
            if name in TL_RANDOM:
                return COMPUTED
            return COMPUTED if most >= LOADED else NONE
        if kind[0] == "jit":
            ret, computes = self.summary(kind[1], tuple(self.eval(a, env, ctx) for a in call.args), ctx["depth"] + 1)
            ctx["computes"] = ctx["computes"] or computes
            return ret
        if kind[0] == "method":
            name, receiver = kind[1], self.eval(kind[2], env, ctx)
            if name == "load":
                return LOADED
            if name == "store":
                return NONE
            if name in VALUE_METHODS_DATA_MOVEMENT:
                return receiver
            return COMPUTED if max(receiver, most) >= LOADED else NONE
        return COMPUTED if most >= LOADED else NONE

    def _sink(self, call, env, ctx):
        kind = self._call_kind(call.func, ctx)
        if kind[0] == "tl" and kind[1] == "store" or kind[0] == "method" and kind[1] == "store":
            value = self.eval(self._arg(call, 1, "value"), env, ctx)
            mask = self.eval(self._arg(call, 2, "mask"), env, ctx)
            if value == COMPUTED or mask == COMPUTED:
                ctx["computes"] = True
        elif kind[0] == "tl" and kind[1].startswith("atomic_"):
            ptr = self.eval(self._arg(call, 0, "pointer"), env, ctx)
            val = self.eval(self._arg(call, 1, "val"), env, ctx)
            mask = self.eval(self._arg(call, 2, "mask"), env, ctx)
            if kind[1] == "atomic_xchg":
                hit = val == COMPUTED or mask == COMPUTED
            else:
                hit = val >= LOADED or ptr >= LOADED or mask == COMPUTED
            ctx["computes"] = ctx["computes"] or hit
        elif kind[0] == "jit":
            _, computes = self.summary(kind[1], tuple(self.eval(a, env, ctx) for a in call.args), ctx["depth"] + 1)
            ctx["computes"] = ctx["computes"] or computes


# --------------------------------------------------------------------------------------------
# The result
# --------------------------------------------------------------------------------------------


def _suggestion(rtype, result):
    checks = result["checks"]
    if rtype == 1:
        return ("Write the operator as at least one @triton.jit kernel that loads, computes and stores "
                "with tl.*, and launch it from ModelNew.forward().")
    if rtype == 2:
        names = ", ".join(checks["triton_kernel_exists"]["kernels"])
        return (f"Launch a @triton.jit kernel as kernel[grid](...) from ModelNew.forward() or a helper it "
                f"calls; the defined kernels ({names}) are never launched.")
    if rtype == 3:
        first = _first_violation(result, 3)
        where = f" (first: line {first['line']}, {first['call']})" if first else ""
        return (f"Move the PyTorch computation{where} into @triton.jit kernels: forward() and the code it "
                "calls may only allocate outputs (torch.empty*), take views (.view/.reshape/.contiguous), "
                "read shapes and launch kernels, with no dynamic lookups, exec/eval or reference imports.")
    if rtype == 4:
        names = ", ".join(checks["no_placeholder_kernels"]["placeholders"])
        return (f"The launched kernels ({names}) only move data with tl.load/tl.store; do the operator's "
                "arithmetic inside the kernel, or pass --non-compute if the operator is pure data movement.")
    if rtype == 5:
        first = _first_violation(result, 5)
        where = f" (first: line {first['line']}, {first['call']})" if first else ""
        return (f"Remove the side streams, threads or patched timers/torch{where}: launch the kernels on the "
                "current stream from the calling thread and leave timers and torch untouched.")
    return ""


def _first_violation(result, rtype):
    found = [v for name, check in result["checks"].items()
             if CHECK_TYPES.get(name) == rtype and not check["passed"] for v in check.get("violations", [])]
    return min(found, key=lambda v: v["line"]) if found else None


def _empty_result(filename, non_compute):
    return {"valid": False, "regression_type": None, "regression_types": [], "checks": {},
            "suggestion": "", "file": filename, "filepath": filename, "non_compute": bool(non_compute)}


def lint_source(source, filename="<string>", non_compute=False):
    """Lint the implementation `source` (named `filename`). Never imports or runs it.

    Returns the JSON-ready dict: valid, regression_type (lowest type found, or None),
    regression_types (every type found), checks, suggestion, file (and filepath, upstream's
    name), non_compute; on a syntax error also "error" ("FILE:LINE: ...") and "error_line"."""
    result = _empty_result(filename, non_compute)
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        line = e.lineno or 0
        result["error"] = f"{filename}:{line}: SyntaxError: {e.msg}"
        result["error_line"] = line
        result["suggestion"] = f"Fix the syntax error at {filename}:{line}; the lint could not parse the file."
        return result
    except (ValueError, RecursionError, MemoryError) as e:
        result["error"] = f"{filename}:0: cannot parse: {e}"
        result["error_line"] = 0
        result["suggestion"] = f"Make {filename} a parseable Python source file."
        return result
    tree.body = [stmt for stmt in tree.body if not _is_main_guard(stmt)]  # never runs on import
    try:
        return _analyse(tree, result, filename, non_compute)
    except (RecursionError, MemoryError) as e:  # absurdly deep or large sources
        reason = f"too complex to analyse ({type(e).__name__})"
    except Exception as e:  # noqa: BLE001 - a lint bug must fail the file, never pass it
        reason = f"internal lint error: {type(e).__name__}: {e}"
    result = _empty_result(filename, non_compute)
    result["error"] = f"{filename}:0: {reason}"
    result["error_line"] = 0
    result["suggestion"] = "The lint could not analyse this file; simplify it or report the lint error."
    return result


def _analyse(tree, result, filename, non_compute):
    a = _Analysis(tree, filename, non_compute)
    a.check_module()
    kernels = sorted(a.kernel_nodes, key=lambda n: n.lineno)
    checks = result["checks"]
    checks["triton_kernel_exists"] = {
        "passed": bool(kernels), "kernels": [k.name for k in kernels],
        "lines": {k.name: k.lineno for k in kernels}}
    if not kernels:
        checks["triton_kernel_exists"]["error"] = "no function decorated with @triton.jit (or wrapped by triton.jit)"

    info = a.model_class()
    launched = []
    called = {"passed": False, "called": []}
    if info is None or not a.entries(info):
        called["error"] = "no class ModelNew with a forward() method"
    else:
        a.walk_reachable(info)
        launched = sorted(a.launches, key=lambda n: n.lineno)
        called["called"] = [k.name for k in launched]
        called["passed"] = bool(launched)
        if not launched:
            called["error"] = ("no kernel is launched (kernel[grid](...) or kernel.run(...)) from "
                               "ModelNew.forward() or anything it calls")
    checks["kernel_called_from_forward"] = called

    for name in VIOLATION_CHECKS:
        violations = sorted(a.violations[name], key=lambda v: (v["line"], v["call"]))
        checks[name] = {"passed": not violations, "violations": violations}

    placeholders = []
    if non_compute:
        checks["no_placeholder_kernels"] = {
            "passed": True, "placeholders": [], "skipped": "non-compute operator: kernels may only move data"}
    else:
        taint = _KernelTaint(a)
        for k in launched:
            _, computes = taint.summary(k)
            if not computes:
                placeholders.append(k)
        all_placeholders = bool(launched) and len(placeholders) == len(launched)
        checks["no_placeholder_kernels"] = {
            "passed": not all_placeholders, "placeholders": [k.name for k in placeholders],
            "violations": [{"line": k.lineno, "call": k.name,
                            "reason": "placeholder kernel: it only loads and stores (no arithmetic on the data "
                                      "it loads), so the computation happens elsewhere"} for k in placeholders]}

    # Order as upstream first, then ours.
    order = ["triton_kernel_exists", "kernel_called_from_forward", "no_forbidden_torch_ops",
             "no_placeholder_kernels"] + [n for n in VIOLATION_CHECKS if n != "no_forbidden_torch_ops"]
    result["checks"] = {name: checks[name] for name in order}
    for name, check in result["checks"].items():
        check["regression_type"] = CHECK_TYPES[name]
    types = sorted({CHECK_TYPES[name] for name, check in result["checks"].items() if not check["passed"]})
    if kernels and 1 in types:
        types.remove(1)
    if not kernels and 2 in types:
        types.remove(2)  # type 2 needs kernels to exist
        types = sorted(set(types) | {1})
    result["regression_types"] = types
    result["regression_type"] = types[0] if types else None
    result["valid"] = not types
    result["suggestion"] = " ".join(_suggestion(t, result) for t in types) if types else \
        "No regression found: the operator's computation is in launched Triton kernels."
    return result


def lint_file(path, non_compute=False):
    """lint_source on the file at `path`; an unreadable file gives a result with "error"."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
        source = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        result = _empty_result(path, non_compute)
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        result["error"] = f"{path}:0: cannot read: {reason}"
        result["error_line"] = 0
        result["suggestion"] = f"Give the lint a readable UTF-8 Python file ({path})."
        return result
    return lint_source(source, path, non_compute)


def exit_code(result):
    """0 valid, 1 a regression found, 2 the file could not be read or parsed."""
    if "error" in result:
        return 2
    return 0 if result["valid"] else 1


def _check_lines(result):
    """(line, call, reason) for every failure, for the text summary."""
    out = []
    checks = result["checks"]
    if not checks["triton_kernel_exists"]["passed"]:
        out.append((1, "@triton.jit", checks["triton_kernel_exists"].get("error", "no kernel")))
    elif not checks["kernel_called_from_forward"]["passed"]:
        lines = checks["triton_kernel_exists"]["lines"]
        for name in checks["triton_kernel_exists"]["kernels"]:
            out.append((lines[name], name, "kernel is never launched from ModelNew.forward()"))
    for name, check in checks.items():
        if name in ("triton_kernel_exists", "kernel_called_from_forward"):
            continue
        if not check["passed"]:
            out.extend((v["line"], v["call"], v["reason"]) for v in check.get("violations", []))
    return sorted(out, key=lambda x: x[0])


def format_text(result):
    """The human summary: valid/invalid, the type, each violation as `file:line: call — reason`."""
    f = result["file"]
    if "error" in result:
        return f"{f}: ERROR: {result['error']}\n"
    kernels = result["checks"]["triton_kernel_exists"]["kernels"]
    called = result["checks"]["kernel_called_from_forward"]["called"]
    if result["valid"]:
        mode = " (non-compute)" if result["non_compute"] else ""
        return (f"{f}: valid{mode}: kernels {', '.join(kernels)}; launched from forward: "
                f"{', '.join(called)}\n")
    types = result["regression_types"]
    head = f"{f}: INVALID: regression type {types[0]} ({TYPE_TITLES[types[0]]})"
    if len(types) > 1:
        head += "; also type " + ", ".join(str(t) for t in types[1:])
    lines = [head]
    lines += [f"{f}:{line}: {call} \u2014 {reason}" for line, call, reason in _check_lines(result)]
    lines.append(f"suggestion: {result['suggestion']}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """python -m opverify_runtime.lint FILE [--json] [--non-compute] (same as `opverify lint`)."""
    import argparse
    parser = argparse.ArgumentParser(prog="opverify lint", description=__doc__.split("\n")[0])
    parser.add_argument("file")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--non-compute", action="store_true")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    result = lint_file(args.file, non_compute=args.non_compute)
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(format_text(result))
    return exit_code(result)


if __name__ == "__main__":
    sys.exit(main())
