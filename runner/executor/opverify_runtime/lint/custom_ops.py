"""A declared library's own torch custom operators: `torch.ops.<ns>.<op>(...)` called in its code
runs the function the library registered for it, so the walk follows that function (torchao's
`torch.ops.torchao.scaled_int8_mm`, implemented under `@torch.library.impl(lib, ..., "CUDA")`).
Registrations read from the library modules the lint has read:

    @torch.library.custom_op("ns::op", ...)   @torch.library.triton_op("ns::op", ...)
    @torch.library.impl("ns::op", "cuda")     @torch.library.register_kernel("ns::op", "cuda")
    torch.library.register_kernel("ns::op", "cuda")(fn)   (any decorator above in its call form)
    lib = torch.library.Library("ns", "DEF")  @torch.library.impl(lib, "op", "CUDA")   lib.impl("op", fn, "CUDA")
    a helper that calls lib.impl(op_name, op_func), called with a literal name (vLLM's
    direct_register_custom_op("lora_shrink", _lora_shrink, ...))

A registration in a module the walk has not read (one only the package's __init__ imports, for its
side effect) is found by the operator's quoted name in the declared packages' sources.
A registration for the Meta key, or a fake (`register_fake`, `impl_abstract`), never runs on the
case's tensors and is not followed. An operator of aten or prims is torch's own: compute, as
before (symbols._aten_compute_reason). Mixed into analysis._Analysis."""
import ast
import os

from .library import MAX_BYTES
from .symbols import _const_str

REGISTRARS = {"torch.library.custom_op", "torch.library.triton_op", "torch._library.custom_ops.custom_op",
              "torch.library.impl", "torch.library.register_kernel"}
NOT_RUN_KEYS = {"meta", "Meta"}


def _modules_naming(folder, package, name):
    """The modules under a package folder whose source holds the quoted "ns::op" (read as bytes)."""
    quoted = [f'"{name}'.encode(), f"'{name}".encode()]
    for root, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith((".", "__pycache__")))
        for file in sorted(f for f in files if f.endswith(".py")):
            try:
                with open(os.path.join(root, file), "rb") as f:
                    data = f.read(MAX_BYTES + 1)
            except OSError:
                continue
            if any(q in data for q in quoted):
                parts = os.path.relpath(os.path.join(root, file[:-3]), folder).split(os.sep)
                yield ".".join([package] + [p for p in parts if p != "__init__"])


class _CustomOps:
    def _custom_op_functions(self, path):
        """The functions a declared library registered for `path` ("torch.ops.ns.op" or
        "torch.ops.ns.op.overload"), [] where none is known."""
        parts = path.split(".")
        if len(parts) < 4 or parts[:2] != ["torch", "ops"] or parts[2] in ("aten", "prims"):
            return []
        name = f"{parts[2]}::{parts[3]}"
        found = self._custom_op_index().get(name)
        if found is None and self._read_registering_modules(name):
            found = self._custom_op_index().get(name)
        return found or []

    def _read_registering_modules(self, name):
        """Reads the declared libraries' modules whose source names "ns::op" and that the walk
        has not read: a registration in a module only the package's __init__ imports, for its
        side effect (bitsandbytes' backends). Once per operator; whether any was read."""
        asked = self.__dict__.setdefault("_registrations_sought", set())
        if name in asked:
            return False
        asked.add(name)
        before = len(self.library_scopes)
        for package in self.library_index.library:
            found = self.library_index.find(package)
            for folder in (found[1] or []) if found else []:
                for module in _modules_naming(folder, package, name):
                    self._library_module(module)
        return len(self.library_scopes) > before

    def _custom_op_index(self):
        """{"ns::op": [function nodes]} over the library modules read so far (rebuilt as more are read)."""
        key = len(self.library_scopes)
        if getattr(self, "_custom_ops", (None, None))[0] != key:
            index, helpers = {}, {}
            scopes = [s for s in list(self.library_scopes.values()) if s is not None and s.node is not None]
            for scope in scopes:  # (None: a module that could not be read)
                self._index_custom_ops(scope, index, helpers)
            for scope in scopes if helpers else ():
                self._index_helper_calls(scope, index, helpers)
            self._custom_ops = (key, index)
        return self._custom_ops[1]

    def _index_helper_calls(self, scope, index, helpers):
        """Each call of a registering helper (vLLM's direct_register_custom_op(op_name, op_func))
        with a literal name registers what it passes as the function."""
        for call in (n for n in ast.walk(scope.node) if isinstance(n, ast.Call)):
            where = self.enclosing.get(call, scope)
            for r in self.resolve(call.func, where):
                if r.kind != "func" or r.value not in helpers:
                    continue
                name_param, func_param, namespace = helpers[r.value]
                name = _const_str(self._argument(call, r.value, name_param))
                function = self._argument(call, r.value, func_param)
                if name and function is not None:
                    for f in self.resolve(function, where):
                        if f.kind == "func":
                            index.setdefault(f"{namespace}::{name}", []).append(f.value)

    def _index_custom_ops(self, scope, index, helpers):
        for node in ast.walk(scope.node):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    if isinstance(d, ast.Call):
                        name = self._registered_name(d, self.enclosing.get(d, scope))
                        if name:
                            index.setdefault(name, []).append(node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Call) and node.args:
                # register_kernel("ns::op", "cuda")(fn): the decorator's call form
                where = self.enclosing.get(node, scope)
                name = self._registered_name(node.func, where)
                for r in self.resolve(node.args[0], where) if name else ():
                    if r.kind == "func":
                        index.setdefault(name, []).append(r.value)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "impl" \
                    and len(node.args) >= 2:  # lib.impl("op", fn, "CUDA")
                where = self.enclosing.get(node, scope)
                namespace = self._library_namespace(node.func.value, where)
                if not namespace or NOT_RUN_KEYS & {_const_str(a) for a in node.args[2:3]}:
                    continue
                if _const_str(node.args[0]):
                    for r in self.resolve(node.args[1], where):
                        if r.kind == "func":
                            index.setdefault(f"{namespace}::{_const_str(node.args[0])}", []).append(r.value)
                elif where.kind == "function" and all(isinstance(a, ast.Name) and a.id in where.params
                                                      for a in node.args[:2]):
                    helpers[where.node] = (node.args[0].id, node.args[1].id, namespace)  # impl(op_name, op_func)

    def _registered_name(self, decorator, scope):
        """"ns::op" a registering decorator names, or None (not one, or for the Meta key)."""
        paths = {r.value for r in self.resolve(decorator.func, scope) if r.kind == "path"}
        if not paths & REGISTRARS or not decorator.args:
            return None
        keys = {_const_str(a) for a in decorator.args[1:]} | {_const_str(k.value) for k in decorator.keywords
                                                             if k.arg in ("device_types", "dispatch_key", "types")}
        if keys & NOT_RUN_KEYS:
            return None
        first = _const_str(decorator.args[0])
        if first and "::" in first:
            return first.split(".")[0]  # "ns::op" or "ns::op.overload"
        namespace = self._library_namespace(decorator.args[0], scope)  # impl(lib, "op", ...)
        op = _const_str(decorator.args[1]) if len(decorator.args) > 1 else None
        return f"{namespace}::{op.split('.')[0]}" if namespace and op else None

    def _library_namespace(self, expr, scope, depth=0):
        """The namespace of `lib` in `lib = torch.library.Library("ns", "DEF")`, or None."""
        if not isinstance(expr, ast.Name) or depth > 4:
            return None
        while scope is not None and expr.id not in scope.bindings:
            scope = scope.outer
        for b in (scope.bindings.get(expr.id, []) if scope is not None else []):
            value = b.value if b.kind == "expr" else None
            if isinstance(value, ast.BoolOp):  # my_lib = target_lib or vllm_lib: the library it falls back to
                return next(filter(None, (self._library_namespace(v, scope, depth + 1) for v in value.values)), None)
            if isinstance(value, ast.Call) and value.args and _const_str(value.args[0]) and any(
                    r.kind == "path" and r.value == "torch.library.Library" for r in self.resolve(value.func, scope)):
                return _const_str(value.args[0])
        return None
