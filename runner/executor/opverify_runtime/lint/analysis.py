"""The analysis of one parsed implementation: its scopes and bindings, the resolution of
expressions to what they may denote (flow-insensitive, an over-approximation), the
kernels it defines, and the violations found. The checks themselves are mixed in from
module_checks (the whole file) and reachability (ModelNew.forward and what it reaches); library
reads the declared library packages' sources into the same analysis."""
import ast
import builtins

from .branches import _Branches
from .calls import _Calls
from .custom_ops import _CustomOps
from .library import _Library
from .module_checks import _ModuleChecks
from .names import (CONVENTIONAL_NAMES, GENERATED_MODULE_CALLS, METADATA_VALUES, NN_MODULE_RETURNS_SELF, NN_SEQUENTIAL,
                    VIOLATION_CHECKS, WRAP_TRITON)
from .reachability import _Reachability
from .registry import own_rows
from .symbols import (ClassInfo, Ref, Scope, _const_str, _dotted, _fold_str, _is_jit_path, _is_tuner_path,
                      _nn_layer_reason, _op_name, _renames, _unparse)


class Unpacked(ast.expr):
    """The index-th item of what `call` returns (`a, b = f(...)`): resolved through f's returns."""
    _fields = ()

    def __init__(self, call, index):
        super().__init__(lineno=call.lineno, col_offset=call.col_offset)
        self.call, self.index = call, index


class _Analysis(_ModuleChecks, _Reachability, _Branches, _Calls, _CustomOps, _Library):
    def __init__(self, tree, filename, non_compute, library=(), python_path=()):
        self.tree = tree
        self.filename = filename
        self.non_compute = non_compute
        self.op = _op_name(filename)
        self.enclosing = {}      # node -> Scope it is evaluated in
        self.scope_of = {}       # def / lambda / class node -> its own Scope
        self.classes = {}        # ClassDef -> ClassInfo
        self.star_imports = []   # (module, line)
        self.kernel_nodes = set()
        self.wrapped_kernels = {}  # kernel node -> the declared library's decorator around its triton.jit
        self.parents = {}
        self._resolved = {}
        self._steps = 0
        self.violations = {name: [] for name in VIOLATION_CHECKS}
        self._seen_violations = set()
        self.scope_module = {}   # id(module Scope) -> a library module's name
        self._node_env = {}      # constants known where the node being scanned runs (branches.py)
        self.allowed_paths, self.override_names = (), ()  # an override's: torch.library; its operator (registry.py)
        self.launches, self.unproven, self.unproven_kernels = {}, [], set()  # set by the reachability walk
        self._init_library(library, python_path)
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
            module = self._absolute_import(node) or "." * node.level + (node.module or "")
            for alias in node.names:
                if alias.name == "*" and self._visiting is not None:
                    self.library_stars.setdefault(self._visiting[0], []).append((module, node.lineno))
                    continue
                if alias.name == "*":
                    self.star_imports.append((module, node.lineno))
                    continue
                if self.library_index.owns(module) and not module.startswith("."):
                    # kept as (module, name): the module is found by the import system, the name is its attribute
                    scope.bind(alias.asname or alias.name, "from", (module, alias.name), node.lineno)
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
        elif isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, ast.Call):
            # kernel, block, warps = _kernel_meta(dtype): the i-th item of what the callee returns
            for i, t in enumerate(target.elts):
                if not isinstance(t, ast.Starred):
                    self._bind_target(t, Unpacked(value, i), scope, line)
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            s = scope
            if s.kind == "function" and s.cls is not None and target.value.id == s.self_name:
                s.cls.self_attrs.setdefault(target.attr, []).append((value, s, line))
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute):
            # self.cache[key] = value: what self.cache[...] may give back (a table of launchers)
            self._bind_target(target.value, ast.List(elts=[value], lineno=line, col_offset=0), scope, line)

    def _docstrings(self):
        ids = set()
        for node in ast.walk(self.tree):
            body = getattr(node, "body", None)
            if isinstance(body, list):
                for stmt in body:
                    if isinstance(stmt, ast.Expr) and _const_str(stmt.value) is not None:
                        ids.add(stmt.value)
        return ids

    def _find_kernels(self, tree=None):
        tree = tree or self.tree
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for i, d in enumerate(node.decorator_list):
                    target = d.func if isinstance(d, ast.Call) else d
                    if any(r.kind == "path" and _is_jit_path(r.value)
                           for r in self.resolve(target, self.enclosing[d])):
                        self.kernel_nodes.add(node)
                        self._note_library_wrapper(node, node.decorator_list[:i])
        for node in ast.walk(tree):  # kernel = triton.jit(fn), triton.jit(**kw)(fn)
            if isinstance(node, ast.Call) and node.args:
                scope = self.enclosing.get(node, self.module)
                func = node.func.func if isinstance(node.func, ast.Call) else node.func
                if any(r.kind == "path" and _is_jit_path(r.value) for r in self.resolve(func, scope)):
                    for r in self.resolve(node.args[0], scope):
                        if r.kind == "func" and isinstance(r.value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                            self.kernel_nodes.add(r.value)

    def _note_library_wrapper(self, kernel, outer):
        """A kernel under a decorator of a declared library (FlagGems' @pointwise_dynamic): its
        name is the decorator's product, which launches it from code generated at run time."""
        for d in outer:
            target = d.func if isinstance(d, ast.Call) else d
            refs = self.resolve(target, self.enclosing[d])
            if any(r.kind in ("func", "class") and (r.value if r.kind == "func" else r.value.node) in self.file_of
                   or r.kind == "path" and self.library_index.owns(r.value) for r in refs):
                self.wrapped_kernels[kernel] = f"@{_unparse(target, 60)}"
                return

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
            return self._into_library(self._resolve_name(expr.id, scope, seen, depth), seen, depth)
        if isinstance(expr, ast.Attribute):
            out = []
            for base in self.resolve(expr.value, scope, seen, depth + 1):
                out.extend(self._member(base, expr.attr, seen, depth))
            return self._into_library(out, seen, depth)
        if isinstance(expr, ast.Call):
            return self._resolve_call(expr, scope, seen, depth)
        if isinstance(expr, ast.Lambda):
            return [Ref("func", expr)]
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            return [r for e in own_rows(expr.elts, self.override_names) for r in self.resolve(e, scope, seen, depth + 1)]
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
        if isinstance(expr, Unpacked):
            return self._unpacked(expr, scope, seen, depth)
        return []

    def _resolve_name(self, name, scope, seen, depth):
        s = scope
        while s is not None:
            if s.kind == "module" and id(s) in self.scope_module:  # a library module: Python's binding order
                found = self._module_name(self.scope_module[id(s)], name, seen, depth, guess_stars=True)
                if found is not None:
                    return found
                break
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
                    refs += [r.routed(via, True) for r in self.resolve(default, self.enclosing[default], seen, depth + 1)]
                return refs
            s = s.outer
        if name == "__class__":  # the implicit cell of a method (and of what is nested in one): its class
            s = scope
            while s is not None and s.kind == "function" and s.cls is None:
                s = s.outer
            return [Ref("class", s.cls)] if s is not None and s.kind == "function" else []
        if hasattr(builtins, name):
            return [Ref("path", "builtins." + name)]
        if name in CONVENTIONAL_NAMES:
            return [Ref("path", CONVENTIONAL_NAMES[name])]
        if s is not None:  # a library module's name bound nowhere in it
            return []
        return self._file_star_refs(name, seen, depth)

    def _file_star_refs(self, name, seen, depth):
        """A name the implementation file binds only through `from M import *`: the last
        declared-library module that exports it, else (a module not read) the first star's."""
        stars = [(module, line, f"star import from {module} (line {line})") for module, line in self.star_imports]
        found = self._star_import_refs(stars, name, seen, depth) if stars else None
        if found is not None:
            return found
        if stars:
            module, _, via = stars[0]
            return [Ref("path", _dotted(module, name), via)]
        return []

    def _binding_refs(self, name, b, scope, seen, depth):
        if b.kind == "import":
            return [Ref("path", b.value)]
        if b.kind == "from":
            return self._from_import(*b.value, seen, depth + 1)
        if b.kind == "def":
            return [Ref("kernel" if b.value in self.kernel_nodes else "func", b.value)]
        if b.kind == "class":
            return [Ref("class", b.value)]
        where = {"module": "module-level alias", "class": "class attribute", "function": "local alias"}[scope.kind]
        via, refs = f"{where} '{name}' (line {b.line})", self.resolve(b.value, scope, seen, depth + 1)
        renames = scope.kind != "class" and _renames(b.value)  # a class attribute's function is a method
        return [r.routed(via, renames) if r.kind in ("path", "func") else r for r in refs]

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

    def _torch_layer_base(self, info):
        """The torch.nn layer (torch.nn.Linear, not Module or a holder) a class the lint read
        derives from, or None: its forward, where the class does not replace it, is torch's."""
        for c in self._mro(info):
            for b in c.node.bases:
                for r in self.resolve(b, c.def_scope):
                    if r.kind == "path" and _nn_layer_reason(r.value) is not None:
                        return r.value
        return None

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
            layer = self._torch_layer_base(info) if attr in ("forward", "__call__") else None
            if layer is not None:  # super().forward(x) in a subclass of torch.nn.Linear: torch's forward
                return [Ref("path", _dotted(layer, "forward"), base.via)]
            if base.kind in ("self", "instance") and attr == "__class__":
                return [Ref("class", info, base.via)]
            if base.kind in ("self", "instance") and attr in NN_MODULE_RETURNS_SELF:
                return [Ref("returns_self", base)]  # Layer().eval(), self.to(device): the module again
            return [Ref("selfattr", attr)] if base.kind == "self" else []
        if base.kind == "kernel":
            if attr == "run":
                return [Ref("kernel_run", base.value, base.via)]
            if attr == "warmup":
                return [Ref("kernel_warmup", base.value, base.via)]
            if base.value in self.wrapped_kernels:  # copy_func.instantiate(ndim)(...)
                return [Ref("wrapped", base.value, base.via)]
        if base.kind in ("generated", "value"):  # a generated module's functions; torch.finfo(...).max
            return [base]
        return []

    def _resolve_call(self, call, scope, seen, depth):
        out = []
        for r in self.resolve(call.func, scope, seen, depth + 1):
            if r.kind == "path":
                p = r.value
                if p == "builtins.getattr" and len(call.args) >= 2 and _const_str(call.args[1]) is not None:
                    for base in self.resolve(call.args[0], scope, seen, depth + 1):
                        out += self._member(base, _const_str(call.args[1]), seen, depth)
                elif p == "builtins.getattr" and len(call.args) >= 2:
                    out += [b for b in self.resolve(call.args[0], scope, seen, depth + 1) if b.kind == "generated"]
                elif p in METADATA_VALUES:  # torch.finfo(x.dtype).max: a number, not a tensor method
                    out.append(Ref("value", p))
                elif p in GENERATED_MODULE_CALLS:
                    out += self._loaded_module(call, p)
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
                elif (_is_jit_path(p) or p in WRAP_TRITON) and call.args:  # triton.jit(fn), wrap_triton(k)
                    out += self.resolve(call.args[0], scope, seen, depth + 1)
                elif _is_jit_path(p) or _is_tuner_path(p):
                    out.append(Ref("passthrough", p))
                elif p in NN_SEQUENTIAL:  # what it holds (a Sequential's call runs each)
                    via = f"{p.rsplit('.', 1)[-1]} (line {call.lineno})"
                    out += [x.routed(via, True) for a in call.args for x in self._sequential_modules(a, scope, seen, depth)]
                elif p == "builtins.type" and len(call.args) == 1:  # type(self).method
                    out += [Ref("class", x.value, x.via) for x in self.resolve(call.args[0], scope, seen, depth + 1)
                            if x.kind in ("self", "instance")]
            elif r.kind == "returns_self":
                out.append(r.value)
            elif r.kind == "wrapped":
                out.append(r)
            elif r.kind == "passthrough" and call.args:
                out += self.resolve(call.args[0], scope, seen, depth + 1)
            elif r.kind == "class":
                out.append(Ref("instance", r.value, r.via, made_by=(call, scope)))
            elif r.kind == "func":
                out += self._returned(r.value, seen, depth, call=call if r.same_call else None, call_scope=scope)
        return out

    def _loaded_module(self, call, path):
        """The module an importlib call loads: a declared library's module named by a constant,
        else one generated or chosen at run time."""
        name = _const_str(call.args[0]) if call.args and path == "importlib.import_module" else None
        if name is not None and self.library_index.owns(name) and self.library_index.find(name) is not None:
            return [Ref("path", name)]
        return [Ref("generated", call)]

    # ---- reporting -------------------------------------------------------------------------

    def report(self, check, line, call, reason, op=None):
        """`op`: the torch operator a type-3 finding uses ("torch.sort", "Tensor.sum", "@"),
        which a declared exception may allow (opverify_runtime/allowances.py)."""
        key = (check, line, call, self._scan_file)
        if key in self._seen_violations:
            return
        self._seen_violations.add(key)
        violation = {"line": line, "call": call, "reason": reason}
        if op is not None:
            violation["op"] = op
        if self._scan_file is not None:  # in a library function the implementation reaches
            violation["file"] = self._scan_file
        self.violations[check].append(violation)

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
