"""What the analysis knows about names: Refs (what an expression may denote), bindings,
scopes and classes; and the pure helpers over dotted paths and AST nodes (which path a
check forbids, why a torch call is compute, the string a string expression builds)."""
import ast
import os
import re

from .names import (ALLOWED_TENSOR_METHODS, ALLOWED_TORCH_CALLS, ATEN_NON_COMPUTE, ATEN_ROOTS, DYNAMIC_DUNDERS,
                    NN_HOLDERS, PATH_RULES, SDPA, TORCH_DTYPES, TORCH_STATE_QUERIES, TORCH_VALUES)

class Ref:
    """What an expression may denote: kind in path (a dotted module path), func (a def or
    lambda), kernel (a jit def), kernel_run, kernel_launcher, class, instance, self, super,
    selfattr, param, passthrough (a decorator factory), wrapped (what a declared library's
    decorator made of a kernel, and its methods' results: launches the lint cannot see),
    generated (a module loaded at run time, and its attributes), value (a number or dtype
    record such as torch.finfo(...)). `via` names the first indirection the expression
    reached it through (an alias, a partial, a default argument, ...); `same_call` says
    whether a call of the expression still binds its arguments as a call of the value does
    (only renaming on the way: an alias, a star import, a default argument), so that the
    branches a call's constants decide can be pruned through it. `made_by`: an instance's
    constructor call and the scope it is in, whose constants the instance may keep (calls.py)."""
    __slots__ = ("kind", "value", "via", "same_call", "made_by")

    def __init__(self, kind, value, via=None, same_call=True, made_by=None):
        self.kind, self.value, self.via, self.same_call, self.made_by = kind, value, via, same_call, made_by

    def routed(self, via, same_call=False):
        """This ref reached through one more indirection `via` (kept only if it is the first)."""
        if via is None:
            return self
        return Ref(self.kind, self.value, self.via or via, self.same_call and same_call, self.made_by)


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


def _applies_forward(func, callee):
    """Whether a call of `func` reaching `callee` is `Fn.apply(*args)`, which runs
    `Fn.forward(ctx, *args)`: the call's arguments bind from forward's second parameter on."""
    return isinstance(func, ast.Attribute) and func.attr == "apply" and getattr(callee, "name", "") == "forward"


def _renames(expr):
    """Whether `g = expr` only gives another name to what expr denotes, so that g(x) binds its
    arguments as a call of it does (`g = f`, `g = mod.f`); not `g = Fn.apply` (forward's first
    parameter is the context apply adds)."""
    return isinstance(expr, ast.Name) or isinstance(expr, ast.Attribute) and expr.attr != "apply"


def _classify_path(path):
    """(check, reason) for a module path the module-wide checks forbid, or None."""
    parts = path.split(".")
    if path in TORCH_STATE_QUERIES:
        return None
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


def _aten_operator(path):
    """The ATen operator a direct path to it names (torch.ops.aten.mul.Tensor -> mul), or None."""
    for prefix, index in ATEN_ROOTS:
        if path.startswith(prefix):
            parts = path.split(".")
            name = parts[index] if len(parts) > index else None
            return name if name not in ("default", "__call__") else None
    return None


def _aten_compute_reason(path):
    """Why calling an ATen operator directly (torch.ops.aten.mul.Tensor, torch._C._nn.gelu,
    ...) is PyTorch compute, or None (not one, or one that only reads metadata, views or
    allocates). In the implementation file the module-wide no_aten_ops check reports any such
    path; in a declared library this is what finds them."""
    aten = _aten_operator(path)
    if aten is None or aten in ATEN_NON_COMPUTE:
        return None
    return f"{path} is PyTorch compute (the ATen operator {aten}, called directly)"


def _canonical_torch_path(path):
    """The name torch documents for what `path` reaches through a re-export: a module's own
    `torch` (torch.cuda.torch.softmax), a tensor class's methods (torch.nn.Parameter.softmax,
    F.Tensor.exp: torch.Tensor's), torch.nn.modules' layers and their `F` (torch.nn.Softmax,
    torch.nn.functional.relu)."""
    parts = path.split(".")
    if parts[0] not in ("torch", "torch_npu"):
        return path
    again = [i for i, p in enumerate(parts) if p == "torch" and i > 0]
    if again:
        parts = parts[again[-1]:]
    for holder in ("Tensor", "Parameter", "Buffer"):
        if holder in parts[1:-1]:
            return "torch.Tensor." + ".".join(parts[parts.index(holder, 1) + 1:])
    if len(parts) >= 5 and parts[:3] == ["torch", "nn", "modules"]:
        if parts[4] == "F":
            return ".".join(["torch", "nn", "functional"] + parts[5:])
        if parts[4][:1].isupper():
            return ".".join(["torch", "nn"] + parts[4:])
    return ".".join(parts)


# Under namespaces the checks otherwise leave alone: these compute (collectives' sums, gradients).
TORCH_COMPUTE_INSIDE = ("torch.cuda.comm", "torch.cuda.nccl", "torch.autograd.grad", "torch.autograd.backward",
                        "torch.autograd.functional")


def _torch_compute_reason(path):
    """Why calling `path` is PyTorch compute, or None (allowed, a value, or another check's)."""
    path = _canonical_torch_path(path)
    if any(_path_matches(path, p) for p in TORCH_COMPUTE_INSIDE):
        return f"{path} is PyTorch compute"
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
    if _path_matches(path, "torch.nn.functional"):  # F itself, its classes and enums (F.ScalingType.TensorWise)
        return None if len(parts) == 3 or parts[3][:1].isupper() else f"{path} is PyTorch compute (torch.nn.functional)"
    if parts[1] in ("cuda", "npu", "backends", "version", "__version__", "amp", "cpu", "autograd",
                    "types", "distributed", "mps", "xpu", "hpu", "mtia", "accelerator"):
        return None
    if parts[1] == "Tensor" and (len(parts) == 2 or parts[2] in ALLOWED_TENSOR_METHODS):
        return None
    if len(parts) == 2 and parts[1] in TORCH_VALUES or len(parts) == 3 and parts[1] in TORCH_DTYPES:
        return None  # a value, or a dtype's own question (torch.int8.is_floating_point)
    if parts[1] == "nn":
        if len(parts) == 2 or parts[2] in NN_HOLDERS or parts[2] in ("init", "utils", "modules", "parameter"):
            return None if len(parts) <= 3 or parts[2] != "init" else f"{path} initialises a tensor with PyTorch compute"
        return f"{path} is a PyTorch layer"
    if parts[1] in ("linalg", "fft", "special") and len(parts) == 2:
        return None
    return f"{path} is PyTorch compute"


def _nn_layer_reason(path):
    path = _canonical_torch_path(path)
    if path in SDPA:
        return f"{path} is PyTorch attention (forbidden anywhere in the file)"
    parts = path.split(".")
    if (len(parts) >= 3 and parts[0] == "torch" and parts[1] == "nn" and parts[2][:1].isupper()
            and parts[2] not in NN_HOLDERS):
        return f"constructs the PyTorch layer {path} (forbidden anywhere in the file)"
    return None
