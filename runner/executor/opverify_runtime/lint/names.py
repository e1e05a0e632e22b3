"""The lint's tables: the checks and their regression types, and the torch, nn and
triton.language names each check allows or forbids. Data only."""


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
        "full", "full_like", "tensor", "as_tensor", "asarray", "from_numpy", "frombuffer", "arange", "linspace",
        "finfo", "iinfo", "device", "Size", "dtype", "get_default_dtype", "is_tensor",
        "is_floating_point", "is_complex", "promote_types", "result_type", "can_cast",
        "broadcast_shapes", "is_grad_enabled", "no_grad", "inference_mode", "enable_grad",
        "set_grad_enabled", "manual_seed", "seed", "initial_seed", "get_rng_state",
        "set_rng_state", "Generator", "Tensor",
        "nn.Parameter", "nn.parameter.Parameter", "nn.Module", "nn.ParameterList",
        "nn.ParameterDict", "nn.Buffer", "nn.Identity",
        # views and layout in function form (the same as the methods ALLOWED_TENSOR_METHODS allows)
        "squeeze", "unsqueeze", "movedim", "moveaxis", "broadcast_to", "broadcast_tensors", "reshape",
        "permute", "transpose", "swapaxes", "swapdims", "flatten", "unflatten", "t", "adjoint", "narrow",
        "select", "as_strided", "view_as_real", "view_as_complex", "real", "imag", "split", "chunk",
        "unbind", "tensor_split", "hsplit", "vsplit", "dsplit", "diagonal", "atleast_1d", "atleast_2d",
        "atleast_3d", "detach", "alias", "conj", "resolve_conj", "resolve_neg", "clone",
        # allocation and metadata
        "empty_permuted", "zeros_like", "numel", "is_same_size", "is_nonzero", "is_signed",
        "is_inference", "is_storage", "get_device", "is_autocast_enabled", "get_autocast_gpu_dtype",
        "get_autocast_dtype", "get_autocast_cpu_dtype", "is_autocast_cpu_enabled", "is_autocast_available",
        "get_device_module",  # torch.cuda (or the device's module) itself
        "are_deterministic_algorithms_enabled", "is_deterministic_algorithms_warn_only_enabled",
    )
}
# torch's handle on a Triton kernel for its custom operators: wrap_triton(k)[grid](...) launches k.
WRAP_TRITON = {"torch.library.wrap_triton", "torch._library.triton.wrap_triton", "torch.library.triton.wrap_triton"}
# Questions about torch's own state (is it compiling, scripting, tracing?) that libraries ask to
# choose a code path: a bool, no compute, no code compiled (torch.jit and torch._dynamo are
# otherwise no_dynamic_code).
TORCH_STATE_QUERIES = {
    "torch.compiler.is_compiling", "torch.compiler.is_dynamo_compiling", "torch.compiler.is_exporting",
    "torch._dynamo.is_compiling", "torch._dynamo.external_utils.is_compiling", "torch._utils.is_compiling",
    "torch.jit.is_scripting", "torch.jit.is_tracing", "torch._C._get_tracing_state",
    "torch.fx._symbolic_trace.is_fx_tracing", "torch.is_inference_mode_enabled",
    "torch.utils._triton.has_triton", "torch.utils._triton.has_triton_package", "torch.utils._triton.has_triton_tma",
    "torch.utils._triton.has_triton_tma_device",
}
ALLOWED_TORCH_CALLS |= TORCH_STATE_QUERIES
# ATen operators that compute nothing: metadata queries, views, allocation, and the copies and
# fills the tensor methods ALLOWED_TENSOR_METHODS allows. Called directly (torch.ops.aten.<op>,
# torch._C._VariableFunctions.<op>, ...) any other ATen operator is PyTorch compute.
ATEN_NON_COMPUTE = set("""
size sym_size stride sym_stride numel sym_numel dim storage_offset sym_storage_offset is_contiguous
is_non_overlapping_and_dense is_same_size is_floating_point is_complex is_signed is_nonzero
result_type promote_types can_cast empty empty_like empty_strided empty_permuted new_empty
new_empty_strided zeros zeros_like ones ones_like full full_like new_zeros new_ones new_full scalar_tensor
arange view view_as _unsafe_view reshape _reshape_alias as_strided expand expand_as permute transpose t
squeeze unsqueeze select slice narrow alias detach lift_fresh movedim unbind split split_with_sizes
chunk flatten unflatten diagonal view_as_real view_as_complex real imag conj _conj resolve_conj
resolve_neg contiguous clone copy_ _to_copy to _copy_from fill_ zero_ resize_ set_ sym_constrain_range
""".split())
# Where ATen operators are reached directly: prefix -> index of the operator's name in the path.
ATEN_ROOTS = (("torch.ops.aten.", 3), ("torch.ops.prims.", 3), ("torch._ops.ops.aten.", 4),
              ("torch._ops.ops.prims.", 4), ("torch._C._nn.", 3), ("torch._C._VariableFunctions.", 3),
              ("torch._C._linalg.", 3), ("torch._C._special.", 3), ("torch._C._fft.", 3),
              ("torch._C._TensorBase.", 3), ("torch._VF.", 2), ("torch._refs.", 2), ("torch._prims.", 2))
# torch's dtypes: values whose attributes are questions (torch.int8.is_floating_point, .itemsize).
TORCH_DTYPES = {
    "float16", "float32", "float64", "bfloat16", "half", "float", "double", "int8", "int16",
    "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool", "long", "short", "int",
    "complex32", "complex64", "complex128", "cfloat", "cdouble", "chalf", "float8_e4m3fn",
    "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "qint8", "quint8",
    "qint32", "quint4x2", "float4_e2m1fn_x2",
}
# torch attributes that are values, not compute (dtypes, layouts, namespaces).
TORCH_VALUES = TORCH_DTYPES | {
    "Tensor", "Size", "dtype", "device", "layout", "strided", "sparse_coo",
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
__add__ __radd__ __iadd__ __sub__ __rsub__ __isub__ __mul__ __rmul__ __imul__ __matmul__ __rmatmul__
__imatmul__ __truediv__ __rtruediv__ __itruediv__ __floordiv__ __rfloordiv__ __ifloordiv__ __mod__ __rmod__
__pow__ __rpow__ __ipow__ __neg__ __abs__ __and__ __rand__ __or__ __ror__ __xor__ __rxor__ __invert__
__lt__ __le__ __gt__ __ge__ __eq__ __ne__ __imod__ __iand__ __ior__ __ixor__ __lshift__ __rlshift__ __ilshift__
__rshift__ __rrshift__ __irshift__ __divmod__ __rdivmod__ __round__ __trunc__ __floor__ __ceil__
""".split())  # (the arithmetic dunders too: `out.__mul__(y)` is `out * y` spelled as a call)
# The rest of Tensor's compute methods: the in-place forms, the other math, linear algebra,
# comparisons, scatters and the random fills (torch.rand and its kin are not allowed either).
FORBIDDEN_TENSOR_METHODS |= set("""
absolute_ acos_ acosh_ arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh arcsinh_ arctan arctan_
arctan2 arctan2_ arctanh arctanh_ asin_ asinh_ atan_ atan2_ atanh_ cos_ cosh_ sin_ sinh_ tan_ sinc sinc_
ceil_ floor_ trunc_ frac_ round_ fix fix_ sign_ sgn_ signbit erf_ erfc_ erfinv_ exp2_ expm1_ log10_ log1p_
log2_ logit_ lgamma lgamma_ digamma digamma_ polygamma polygamma_ mvlgamma mvlgamma_ i0 i0_ igamma igamma_
igammac igammac_ square_ negative_ deg2rad deg2rad_ rad2deg rad2deg_ angle conj_physical conj_physical_
float_power float_power_ frexp ldexp ldexp_ nextafter nextafter_ copysign copysign_ heaviside heaviside_
hypot_ xlogy_ logaddexp logaddexp2 gcd gcd_ lcm lcm_ nan_to_num_ renorm renorm_ prelu hardshrink
clamp_max_ clamp_min_ cumsum_ cumprod_ divide_ multiply_ subtract_ true_divide_ floor_divide_ fmod_
remainder_ lerp_ addcdiv_ addcmul_ addmm_ addmv_ addr_ addbmm_ baddbmm_ tril_ triu_ sum_to_size
eq_ ne_ lt_ le_ gt_ ge_ greater_ greater_equal greater_equal_ less_ less_equal less_equal_ not_equal
not_equal_ logical_and_ logical_or_ logical_xor_ logical_not_ bitwise_and_ bitwise_or_ bitwise_xor_
bitwise_not_ bitwise_left_shift bitwise_left_shift_ bitwise_right_shift bitwise_right_shift_
isneginf isposinf isreal argwhere bincount histc histogram unique_consecutive diff dist cov corrcoef trace
det logdet slogdet inverse pinverse matrix_exp matrix_power cholesky cholesky_inverse cholesky_solve
lu_solve triangular_solve qr svd geqrf orgqr ormqr stft istft diag diag_embed diagflat coalesce
index_copy_ index_fill_ index_reduce index_reduce_ scatter_reduce_ masked_scatter_ put_ map2_
fill_diagonal_ as_strided_scatter diagonal_scatter select_scatter slice_scatter sparse_mask smm sspaddmm
dequantize multinomial bernoulli bernoulli_ uniform_ normal_ random_ exponential_ geometric_ cauchy_
log_normal_
""".split())
# The arguments some of them take, as (most positional, keywords): a call that passes more, or
# another keyword, is another object's method of the same name (`logger.log(level, msg)`,
# `configs.sort(key=...)`, `pattern.sub(repl, text)`): a tensor would raise TypeError.
UNARY_TENSOR_METHODS = set("""
log log_ log1p log2 log10 exp exp_ exp2 expm1 sqrt sqrt_ rsqrt rsqrt_ abs abs_ absolute neg neg_ negative
reciprocal reciprocal_ square sign sgn sin cos tan asin acos atan sinh cosh tanh tanh_ asinh acosh atanh erf
erfc erfinv sigmoid sigmoid_ floor ceil trunc frac relu relu_ isnan isinf isfinite logical_not bitwise_not
""".split())
TENSOR_METHOD_ARGUMENTS = {name: (0, set()) for name in UNARY_TENSOR_METHODS}
TENSOR_METHOD_ARGUMENTS.update({
    "round": (0, {"decimals"}), "sort": (2, {"dim", "descending", "stable"}),
    "add": (1, {"other", "alpha", "out"}), "sub": (1, {"other", "alpha", "out"}),
    "numpy": (0, {"force"}), "count_nonzero": (1, {"dim"}),
    # names other objects have too (a tracer's trace, a difference, a histogram of a metrics object)
    "trace": (0, set()), "fix": (0, set()), "det": (0, set()), "inverse": (0, set()),
    "dist": (2, {"other", "p"}), "cov": (0, {"correction", "fweights", "aweights"}),
    "diff": (4, {"n", "dim", "prepend", "append"}), "histogram": (1, {"bins", "range", "weight", "density"}),
    "qr": (1, {"some"}), "svd": (2, {"some", "compute_uv"}),
})
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
get_buffer get_submodule apply register_forward_hook register_forward_pre_hook _get_name _check_input_dim
""".split())  # _check_input_dim: the batch/instance norms' check of the input's rank (it raises)
# Python's operators on a tensor, as the torch operator each one runs (for the findings' `op`).
TENSOR_OPERATORS = {"Add": ("+", "add"), "Sub": ("-", "sub"), "Mult": ("*", "mul"), "Div": ("/", "div"),
                    "FloorDiv": ("//", "floor_divide"), "Mod": ("%", "remainder"), "Pow": ("**", "pow"),
                    "BitAnd": ("&", "bitwise_and"), "BitOr": ("|", "bitwise_or"), "BitXor": ("^", "bitwise_xor"),
                    "LShift": ("<<", "bitwise_left_shift"), "RShift": (">>", "bitwise_right_shift"),
                    "USub": ("-", "neg"), "Invert": ("~", "bitwise_not"), "Lt": ("<", "lt"), "LtE": ("<=", "le"),
                    "Gt": (">", "gt"), "GtE": (">=", "ge"), "Eq": ("==", "eq"), "NotEq": ("!=", "ne")}
# Python's functions that compute on a tensor they are given (builtins and the operator module),
# as the torch operator each runs.
PYTHON_TENSOR_FUNCTIONS = {"builtins.abs": "abs", "builtins.pow": "pow", "builtins.round": "round",
                           "builtins.divmod": "floor_divide", "builtins.sum": "sum", "builtins.max": "max",
                           "builtins.min": "min"}
PYTHON_TENSOR_FUNCTIONS.update({"operator." + name: aten for name, aten in (
    ("add", "add"), ("iadd", "add"), ("sub", "sub"), ("isub", "sub"), ("mul", "mul"), ("imul", "mul"),
    ("truediv", "div"), ("itruediv", "div"), ("floordiv", "floor_divide"), ("ifloordiv", "floor_divide"),
    ("mod", "remainder"), ("imod", "remainder"), ("pow", "pow"), ("ipow", "pow"), ("neg", "neg"),
    ("abs", "abs"), ("matmul", "matmul"), ("imatmul", "matmul"), ("and_", "bitwise_and"), ("or_", "bitwise_or"),
    ("xor", "bitwise_xor"), ("invert", "bitwise_not"), ("inv", "bitwise_not"), ("lt", "lt"), ("le", "le"),
    ("gt", "gt"), ("ge", "ge"), ("eq", "eq"), ("ne", "ne"))})
# The nn.Module methods that return the module itself: `Layer().eval()`, `.to(device)`, `.half()`.
NN_MODULE_RETURNS_SELF = {"to", "cuda", "cpu", "npu", "xpu", "float", "half", "double", "bfloat16", "type",
                          "train", "eval", "requires_grad_", "share_memory", "to_empty"}
# torch.nn's containers of modules: their members are what they hold (a Sequential's call runs each).
NN_SEQUENTIAL = {"torch.nn.Sequential", "torch.nn.modules.container.Sequential", "torch.nn.ModuleList",
                 "torch.nn.modules.container.ModuleList", "torch.nn.ModuleDict", "torch.nn.modules.container.ModuleDict"}
# Attributes whose assignment swaps what runs for the forward the lint reads, and nn.Module's
# hook tables: the implementation file may do neither.
FORWARD_SWAPS = {"forward", "__call__", "_call_impl", "_wrapped_call_impl", "__class__", "__getattribute__"}
HOOK_TABLES = {"_forward_hooks", "_forward_pre_hooks", "_forward_hooks_with_kwargs", "_forward_pre_hooks_with_kwargs",
               "_forward_hooks_always_called", "_global_forward_hooks", "_global_forward_pre_hooks"}
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
# Calls whose result is a number or dtype record, not a tensor: its .max/.min are values.
METADATA_VALUES = {"torch.finfo", "torch.iinfo"}
# Calls that load a module chosen or written at run time (a library's generated code).
GENERATED_MODULE_CALLS = {"importlib.util.module_from_spec", "importlib.import_module", "imp.load_source",
                          "imp.load_module", "types.ModuleType"}
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
# What a library may do with `getattr(torch, <computed name>)` (torch.cuda, torch.npu, ... looked up
# by a device's type): call these on it, test it, hasattr it. Any other use stays a dynamic lookup.
DEVICE_NAMESPACE_CALLS = {"device", "current_device", "device_count", "is_available", "is_initialized",
                          "synchronize", "set_device", "get_device_name", "get_device_capability",
                          "get_device_properties"}

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
