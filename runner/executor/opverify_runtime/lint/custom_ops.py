"""A declared library's own torch custom operators: `torch.ops.<ns>.<op>(...)` called in its code
runs the function the library registered for it, so the walk follows that function (torchao's
`torch.ops.torchao.scaled_int8_mm`, implemented under `@torch.library.impl(lib, ..., "CUDA")`).
Registrations read from the library modules the lint has read:

    @torch.library.custom_op("ns::op", ...)   @torch.library.triton_op("ns::op", ...)
    @torch.library.impl("ns::op", "cuda")     @torch.library.register_kernel("ns::op", "cuda")
    lib = torch.library.Library("ns", "DEF")  @torch.library.impl(lib, "op", "CUDA")   lib.impl("op", fn, "CUDA")

A registration for the Meta key, or a fake (`register_fake`, `impl_abstract`), never runs on the
case's tensors and is not followed. An operator of aten or prims is torch's own: compute, as
before (symbols._aten_compute_reason). Mixed into analysis._Analysis."""
import ast

from .symbols import _const_str

REGISTRARS = {"torch.library.custom_op", "torch.library.triton_op", "torch._library.custom_ops.custom_op",
              "torch.library.impl", "torch.library.register_kernel"}
NOT_RUN_KEYS = {"meta", "Meta"}


class _CustomOps:
    def _custom_op_functions(self, path):
        """The functions a declared library registered for `path` ("torch.ops.ns.op" or
        "torch.ops.ns.op.overload"), [] where none is known."""
        parts = path.split(".")
        if len(parts) < 4 or parts[:2] != ["torch", "ops"] or parts[2] in ("aten", "prims"):
            return []
        return self._custom_op_index().get(f"{parts[2]}::{parts[3]}", [])

    def _custom_op_index(self):
        """{"ns::op": [function nodes]} over the library modules read so far (rebuilt as more are read)."""
        key = len(self.library_scopes)
        if getattr(self, "_custom_ops", (None, None))[0] != key:
            index = {}
            for scope in list(self.library_scopes.values()):
                if scope.node is not None:
                    self._index_custom_ops(scope, index)
            self._custom_ops = (key, index)
        return self._custom_ops[1]

    def _index_custom_ops(self, scope, index):
        for node in ast.walk(scope.node):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in node.decorator_list:
                    if isinstance(d, ast.Call):
                        name = self._registered_name(d, self.enclosing.get(d, scope))
                        if name:
                            index.setdefault(name, []).append(node)
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "impl" \
                    and len(node.args) >= 2 and _const_str(node.args[0]):  # lib.impl("op", fn, "CUDA")
                where = self.enclosing.get(node, scope)
                namespace = self._library_namespace(node.func.value, where)
                if namespace and not NOT_RUN_KEYS & {_const_str(a) for a in node.args[2:3]}:
                    for r in self.resolve(node.args[1], where):
                        if r.kind == "func":
                            index.setdefault(f"{namespace}::{_const_str(node.args[0])}", []).append(r.value)

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

    def _library_namespace(self, expr, scope):
        """The namespace of `lib` in `lib = torch.library.Library("ns", "DEF")`, or None."""
        if not isinstance(expr, ast.Name):
            return None
        while scope is not None and expr.id not in scope.bindings:
            scope = scope.outer
        for b in (scope.bindings.get(expr.id, []) if scope is not None else []):
            value = b.value if b.kind == "expr" else None
            if isinstance(value, ast.Call) and value.args and _const_str(value.args[0]) and any(
                    r.kind == "path" and r.value == "torch.library.Library" for r in self.resolve(value.func, scope)):
                return _const_str(value.args[0])
        return None
