"""Reachability from ModelNew.forward (types 2 and 3): the entries (forward, __call__,
forward hooks), the walk through everything they call, the kernels launched on the way
and the PyTorch compute found there. Mixed into analysis._Analysis."""
import ast
from collections import deque

from .branches import MAX_CONTEXTS
from .values import UNKNOWN, Constexpr, Opaque, context_key
from .names import (DEVICE_NAMESPACE_CALLS, DYNAMIC_DUNDERS, FORBIDDEN_TENSOR_METHODS, HOOK_REGISTRARS, NN_MODULE_API,
                    PYTHON_TENSOR_FUNCTIONS, TENSOR_OPERATORS,
                    TENSOR_METHOD_ARGUMENTS)
from .symbols import _applies_forward, _aten_compute_reason, _const_str, _shown, _torch_compute_reason, _unparse


class _Reachability:
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
        self.unproven = []       # launches only the runtime evidence can show (_record_unproven)
        self.unproven_kernels = set()
        self.visited = set()
        self.launch_params = {}
        entry_nodes = self.entries(info)
        self._drain(entry_nodes, set(entry_nodes[:2]))
        return entry_nodes

    def walk_entries(self, entry_nodes):
        """walk_reachable from given functions (an override's enable callables), none of them a forward."""
        self.model_mro = []
        self.launches, self.visited, self.launch_params = {}, set(), {}
        self.unproven, self.unproven_kernels = [], set()
        self._drain(entry_nodes, set())

    def _drain(self, entry_nodes, forward_nodes):
        """Scans each function reached, once per context of constant arguments (branches.py):
        queue items are functions (nothing known) or (function, {param: constant})."""
        queue = deque(entry_nodes)
        contexts = {}  # function -> the context keys it was scanned with
        while queue:
            item = queue.popleft()
            fn, bound = item if isinstance(item, tuple) else (item, {})
            if fn in self.kernel_nodes:
                continue
            done = contexts.setdefault(fn, set())
            if not done and fn in self.visited:
                continue  # a nested def, scanned whole with the function around it
            if len(done) >= MAX_CONTEXTS:
                bound = {}
            key = context_key(bound)
            if () in done or key in done:
                continue
            if not done:  # what its decorators made of it runs when it is called: their code too
                queue.extend(self._decorator_code(fn))
            done.add(key)
            self.visited.add(fn)
            self._scan_file = self.file_of.get(fn)  # a library function's violations name its file
            self._scan_function(fn, fn in forward_nodes and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                                and fn.name in ("forward", "__call__"), queue, bound)
        self._scan_file = None

    def _compute_reason(self, path):
        if any(path == p or path.startswith(p + ".") for p in self.allowed_paths):
            return None
        reason = _torch_compute_reason(path)
        if reason is None and self._scan_file is not None:  # in a library: torch.ops.aten.mul.Tensor too
            reason = _aten_compute_reason(path)
        return reason

    def _decorator_code(self, fn):
        """The functions of the code the lint read that `fn`'s decorators run when `fn` is called:
        a decorator (or decorator factory) of its own, whose body and the wrapper defined in it are
        scanned whole (`@timed def launch(x)` with `wrapper` returning `torch.exp(fn(x))`), and a
        decorator class's `__init__` and `__call__`. Decorators of torch, triton, functools and
        the like (paths) are theirs; a kernel's decorators are the kernel's machinery. Only for
        the implementation file's own functions: a declared library's decorators (fla's backend
        `dispatch`, with its registries and logs) are left to the runtime evidence, which sees
        what their wrappers run."""
        if self.file_of.get(fn) is not None:
            return []
        out = []
        scope = self.enclosing.get(fn, self.module)
        for decorator in getattr(fn, "decorator_list", []):
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            for r in self.resolve(target, scope):
                if r.kind == "func" and r.value is not fn:
                    out.append(r.value)
                elif r.kind == "class" and r.value is not None:
                    for name in ("__init__", "__call__"):
                        out += [m.value for m in self._class_member(r.value, name, frozenset(), 0, instance=False) or []
                                if m.kind == "func"]
        return out

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

    def _record_unproven(self, ref, call):
        """A launch through a declared library's own machinery: a kernel under its decorator
        (launched from code the decorator generates) or a module it generates and imports. The
        lint cannot see the kernel launched there: the runtime evidence must."""
        if self._scan_file is None:
            return  # the implementation file's own: importlib there is type 3 already
        if ref.kind == "generated":
            how = "calls into a module the library generates and imports at run time"
        else:
            how = f"{self.wrapped_kernels[ref.value]} launches {ref.value.name} from code it generates at run time"
        entry = {"file": self._scan_file, "line": call.lineno, "call": _unparse(call.func, 60), "how": how}
        if ref.kind != "generated":
            entry["kernel"] = ref.value.name
            self.unproven_kernels.add(ref.value)
        if entry not in self.unproven:
            self.unproven.append(entry)

    def _scan_function(self, fn, is_forward, queue, bound):
        """Scans what of fn can run with its parameters bound to `bound`: the branches those
        constants rule out are skipped."""
        nodes = []
        for d in fn.args.defaults + [d for d in fn.args.kw_defaults if d is not None]:
            nodes.extend((n, {}) for n in ast.walk(d))
        nodes += self._live_nodes(fn, bound)
        for node, env in nodes:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                self.visited.add(node)
            self._node_env = env
            self._scan_node(node, fn, is_forward, queue)
        self._node_env = {}

    def _forbidden(self, node, fn, call_text, reason, via, op=None):
        hidden = via or self._hidden_context(node, fn)
        if hidden:
            self.report("no_hidden_torch_compute", node.lineno, call_text, f"{reason}, hidden {hidden}"
                        if not via else f"{reason}, reached through {via}", op)
        else:
            self.report("no_forbidden_torch_ops", node.lineno, call_text, reason, op)

    def _scan_node(self, node, fn, is_forward, queue):
        scope = self.enclosing.get(node, self.module)
        if is_forward and isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            kind = "while" if isinstance(node, ast.While) else "for"
            self.report("no_forbidden_torch_ops", node.lineno, f"{kind} loop",
                        f"forward() may not loop on the host ({kind}); the computation belongs in one Triton kernel launch")
        if (isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult)) or (
                isinstance(node, ast.AugAssign) and isinstance(node.op, ast.MatMult)):
            self._forbidden(node, fn, "@", "the @ operator is a PyTorch matrix product", None, "@")
        else:
            self._scan_operator(node, fn, scope)
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
                reason = self._compute_reason(r.value)
                if reason is not None and not self._type_operand(node, scope):
                    self.report("no_hidden_torch_compute", node.lineno, _shown(_unparse(node), r.value),
                                f"{reason}, passed around as a value" + (f" through {r.via}" if r.via else ""),
                                r.value)
            elif r.kind == "func" and not self._renamed(node, fn):
                queue.append(r.value)
        if not refs and isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_TENSOR_METHODS \
                and not self._stored_attribute(node, fn):
            self.report("no_hidden_torch_compute", node.lineno, _unparse(node),
                        f"the tensor method .{node.attr} is taken as a value to be called elsewhere",
                        "Tensor." + node.attr)

    def _type_operand(self, node, scope):
        """Whether `node` is the class isinstance/issubclass tests against (alone or in a tuple):
        `isinstance(x, FakeTensor)` asks a type, it computes nothing."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.Tuple):
            node, parent = parent, self.parents.get(parent)
        return isinstance(parent, ast.Call) and len(parent.args) == 2 and parent.args[1] is node and \
            {r.value for r in self.resolve(parent.func, scope) if r.kind == "path"} & {"builtins.isinstance",
                                                                                    "builtins.issubclass"}

    @staticmethod
    def _stored_attribute(node, fn):
        """Whether `name.attr` read here is a value the function itself stored there
        (`ctx.dropout = p > 0`, then `ctx.dropout` passed on): data, not the tensor method of that
        name. What was stored is scanned where it is stored."""
        if not isinstance(node.value, ast.Name):
            return False
        return any(isinstance(n, ast.Attribute) and isinstance(n.ctx, ast.Store) and n.attr == node.attr
                   and isinstance(n.value, ast.Name) and n.value.id == node.value.id for n in ast.walk(fn))

    def _renamed(self, node, fn):
        """Whether the function `node` names is only given another name here: a parameter's
        default, or a local alias (`impl = launcher`). Every use of that name is scanned where
        it is used (a call, with its arguments; anything else, as a value), so the function is
        not followed here with its arguments unknown. A name bound `global`/`nonlocal` is not
        local: its uses are elsewhere."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.arguments):
            return node in parent.defaults or node in parent.kw_defaults
        if not (isinstance(parent, ast.Assign) and parent.value is node
                and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
                and all(isinstance(t, ast.Name) for t in parent.targets)):
            return False
        names = {t.id for t in parent.targets}
        return not any(isinstance(n, (ast.Global, ast.Nonlocal)) and names & set(n.names) for n in ast.walk(fn))

    def _scan_call(self, call, fn, is_forward, scope, queue):
        func = call.func
        refs = self.resolve(func, scope)
        if isinstance(func, ast.Subscript):
            for r in self.resolve(func.value, scope):
                if r.kind in ("kernel", "kernel_launcher"):  # k[grid](...), table[name][grid](...)
                    self._record_launch(r.value, call.lineno)
            refs = [r for r in refs if r.kind not in ("kernel", "kernel_launcher")]  # table[name](...)
        func_text = _unparse(func)
        generated = any(r.kind == "generated" for r in refs)
        for r in refs:
            if r.kind == "path":
                if r.value == "builtins.getattr" and len(call.args) >= 2 and _const_str(call.args[1]) is None \
                        and not self._device_namespace_lookup(call, fn, scope) \
                        and not self._generated_module_lookup(call, scope):
                    self.report("no_dynamic_lookup", call.lineno, self._getattr_display(call),
                                "getattr with a computed name hides which attribute is used")
                if r.value in ("builtins.getattr",) and len(call.args) >= 2 and _const_str(call.args[1]) is not None:
                    attr = _const_str(call.args[1])
                    target = self.resolve(call.args[0], scope)
                    known = any(t.kind in ("path", "class", "instance", "self") for t in target)
                    if not known and attr in FORBIDDEN_TENSOR_METHODS:
                        self.report("no_dynamic_lookup", call.lineno, self._getattr_display(call),
                                    f"getattr hides the tensor compute method .{attr}")
                reason = self._compute_reason(r.value)
                if reason is not None:
                    self._forbidden(call, fn, _shown(func_text, r.value), reason, r.via, r.value)
                elif r.value in PYTHON_TENSOR_FUNCTIONS:
                    self._scan_python_function(call, fn, scope, r.value, func_text)
                for target in self._custom_op_functions(r.value):  # torch.ops.<library's ns>.<op>(...)
                    queue.append((target, self._call_context(call, target, func, scope, self._node_env, True)))
            elif r.kind == "func":
                queue.append((r.value, self._call_context(call, r.value, func, scope, self._node_env, r.same_call)))
                self._launches_through_params(call, r.value, scope, func)
            elif r.kind in ("kernel_run", "kernel_launcher"):
                self._record_launch(r.value, call.lineno)
            elif r.kind in ("wrapped", "generated") or r.kind == "kernel" and r.value in self.wrapped_kernels:
                self._record_unproven(r, call)
            elif r.kind == "class":
                for name in ("__init__", "forward", "__call__"):
                    for m in self._class_member(r.value, name, frozenset(), 0, instance=False) or []:
                        if m.kind == "func":
                            queue.append(m.value)
            elif r.kind == "instance":
                self._scan_instance_call(call, r, func, fn, scope, queue)
            elif r.kind == "selfattr" and r.value not in NN_MODULE_API and not generated:
                # (a library's cache of the functions it generated, self.overloads[key], is
                # the generated module's function: left to the runtime evidence above)
                self.report("no_forbidden_torch_ops", call.lineno, f"{func_text}(...)",
                            f"self.{r.value}() is not a method of the class: likely an nn.Module's forward "
                            "doing the computation in PyTorch")
        builtin_member = refs and all(r.kind == "path" and r.value.startswith("builtins.") and r.value.count(".") == 2
                                      for r in refs)  # input.exp(): a loop variable named like a builtin
        if (not refs or builtin_member) and isinstance(func, ast.Attribute):
            if func.attr in FORBIDDEN_TENSOR_METHODS and not self._not_a_tensor_method(call, fn, scope):
                self._forbidden(call, fn, func_text, f"the tensor method .{func.attr}() computes in PyTorch", None,
                                "Tensor." + func.attr)
            elif func.attr in DYNAMIC_DUNDERS:
                self.report("no_dynamic_lookup", call.lineno, func_text,
                            f"{func.attr} looks attributes up by string, hiding them from the lint")
        if is_forward and isinstance(func, ast.Attribute) and func.attr == "append":
            self.report("no_forbidden_torch_ops", call.lineno, f"{func_text}(...)",
                        "forward() may not build lists with append (host-side state belongs in the kernel)")

    def _scan_operator(self, node, fn, scope):
        """`out += y`, `out * 2`, `out > 0` where an operand is a tensor the function made
        (torch.empty_like(x) and its kin, bound there): PyTorch arithmetic after a launch. An
        operand the lint cannot tell a tensor (a parameter, a view) is not judged here; the
        runtime evidence sees its operator on a device."""
        if isinstance(node, ast.BinOp):
            pairs = [(node.op, [node.left, node.right])]
        elif isinstance(node, ast.AugAssign):
            pairs = [(node.op, [node.target, node.value])]
        elif isinstance(node, ast.UnaryOp):
            pairs = [(node.op, [node.operand])]
        elif isinstance(node, ast.Compare):
            pairs = [(op, [left, right]) for op, left, right in
                     zip(node.ops, [node.left] + node.comparators, node.comparators)]
        else:
            return
        for op, operands in pairs:
            symbol, name = TENSOR_OPERATORS.get(type(op).__name__, (None, None))
            if name is not None and self._on_made_tensor(node, fn, scope, operands, _unparse(node, 60),
                                                         f"{symbol} on", "Tensor." + name):
                return

    def _scan_python_function(self, call, fn, scope, path, func_text):
        """abs(out), sum([out, y]), operator.add(out, y): a builtin or the operator module's
        function given a tensor the function made (an argument, or an item of a literal list or
        tuple argument) runs torch's operator on it."""
        items = [item for arg in call.args for item in (arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg])]
        self._on_made_tensor(call, fn, scope, items, f"{func_text}(...)", f"{path} of",
                             "Tensor." + PYTHON_TENSOR_FUNCTIONS[path])

    def _on_made_tensor(self, node, fn, scope, operands, text, how, op):
        """Reports `node` as PyTorch compute where one of `operands` is a tensor the function
        made with a torch factory (bound there); whether it did."""
        for operand in operands:
            value = self._value(operand, self._node_env, scope)
            if isinstance(value, Opaque) and value.what == "tensor":
                self._forbidden(node, fn, text, f"{how} the tensor {_unparse(operand, 30)} (made here by a torch "
                                "factory) computes in PyTorch", None, op)
                return True
        return False

    def _not_a_tensor_method(self, call, fn, scope):
        """Whether `obj.name(...)`, name a tensor compute method's, is another object's method:
        the call passes what the tensor method does not take (`logger.log(logging.DEBUG, msg)`,
        `configs.sort(key=...)`), or obj is known not to be a tensor (a set, list, dict, logger
        or constant bound there or passed in: `seen = set(); seen.add(key)`, or such an attribute
        of the class's instances: `self.seen = set()`)."""
        func = call.func
        takes = TENSOR_METHOD_ARGUMENTS.get(func.attr)
        unbound = self._type_of(func.value, scope)  # type(out).exp(out): the tensor is the first argument
        if takes is not None and not any(isinstance(a, ast.Starred) for a in call.args) and (
                len(call.args) > takes[0] + unbound or any(k.arg is not None and k.arg not in takes[1]
                                                           for k in call.keywords)):
            return True
        if unbound:
            return False
        receiver = func.value
        values = [self._value(receiver, self._node_env, scope)]
        if isinstance(receiver, ast.Attribute) and isinstance(receiver.value, ast.Name) and scope.self_name \
                and receiver.value.id == scope.self_name and scope.cls is not None:
            stored = [item for c in self._mro(scope.cls) for item in c.self_attrs.get(receiver.attr, [])]
            values = [self._value(value, {}, where) for value, where, _ in stored] or [UNKNOWN]
        return all(v is not UNKNOWN and not (isinstance(v, Opaque) and v.what == "tensor")
                   and not isinstance(v, Constexpr) for v in values)

    def _type_of(self, expr, scope):
        """Whether expr is `type(x)` or `x.__class__`: a class, whose methods take the instance."""
        if isinstance(expr, ast.Attribute) and expr.attr == "__class__":
            return True
        return isinstance(expr, ast.Call) and len(expr.args) == 1 and any(
            r.kind == "path" and r.value == "builtins.type" for r in self.resolve(expr.func, scope))

    def _scan_instance_call(self, call, ref, func, fn, scope, queue):
        """`obj(...)`: the class's own __call__ with the call's arguments, or (an nn.Module's
        __call__ being torch's) its forward with them; forward with none known where a
        __call__ of the class's may call it otherwise."""
        calls = [m for m in self._class_member(ref.value, "__call__", frozenset(), 0) or [] if m.kind == "func"]
        layer = self._torch_layer_base(ref.value) if ref.value is not None else None
        if layer is not None and not calls and not any(
                m.kind == "func" for m in self._class_member(ref.value, "forward", frozenset(), 0) or []):
            self._forbidden(call, fn, f"{_unparse(call.func)}(...)", f"runs the forward of the PyTorch layer "
                            f"{layer} it derives from", None, layer)
        for name in ("forward", "__call__"):
            for m in self._class_member(ref.value, name, frozenset(), 0) or []:
                if m.kind != "func":
                    continue
                bound = self._instance_options(ref, m.value)
                if name == "__call__" or not calls:
                    bound.update(self._call_context(call, m.value, func, scope, self._node_env,
                                                    ref.same_call and m.same_call, instance_call=True))
                queue.append((m.value, bound))

    def _generated_module_lookup(self, call, scope):
        """`getattr(m, wrapper_name)` in a declared library, m a module it generated: the
        function it wrote, not a torch name hidden from the lint."""
        bases = self.resolve(call.args[0], scope)
        return self._scan_file is not None and bool(bases) and all(b.kind == "generated" for b in bases)

    def _device_namespace_lookup(self, call, fn, scope):
        """Whether `getattr(torch, <computed>, ...)` in a declared library's function is only
        used as a device namespace (DEVICE_NAMESPACE_CALLS called on it, `is None` tests,
        truth tests, hasattr): `with getattr(torch, dev.type).device(dev):` computes nothing,
        whatever the name. Never in the implementation file itself."""
        if self._scan_file is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        if [r for r in self.resolve(call.args[0], scope) if r.kind != "path" or r.value != "torch"] or \
                not self.resolve(call.args[0], scope):
            return False
        parent = self.parents.get(call)
        if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
            return self._device_namespace_use(call)
        name = parent.targets[0].id
        fscope = self.scope_of.get(fn)
        if fscope is None or name in fscope.params or len(fscope.bindings.get(name, [])) != 1:
            return False
        uses = []
        for node in ast.walk(fn):
            if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
                return False
            if isinstance(node, ast.Name) and node.id == name and node is not parent.targets[0]:
                uses.append(node)
        return all(isinstance(u.ctx, ast.Load) and self._device_namespace_use(u) for u in uses)

    def _device_namespace_use(self, node):
        parent = self.parents.get(node)
        if isinstance(parent, ast.Attribute) and parent.value is node:
            grand = self.parents.get(parent)
            return parent.attr in DEVICE_NAMESPACE_CALLS and isinstance(grand, ast.Call) and grand.func is parent
        if isinstance(parent, ast.Compare):  # `ns is None`, `ns is not None`: a bool
            return all(isinstance(op, (ast.Is, ast.IsNot)) for op in parent.ops) and all(
                isinstance(side, ast.Constant) and side.value is None
                for side in [parent.left] + parent.comparators if side is not node)
        if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node and not parent.keywords:
            scope = self.enclosing.get(parent, self.module)
            return len(parent.args) == 2 and _const_str(parent.args[1]) is not None and \
                [r.value for r in self.resolve(parent.func, scope)] == ["builtins.hasattr"]
        while isinstance(parent, ast.BoolOp):  # a truth test, if the `and`/`or` is one
            node, parent = parent, self.parents.get(parent)
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            return True
        return isinstance(parent, (ast.If, ast.While, ast.IfExp, ast.Assert)) and parent.test is node

    def _launches_through_params(self, call, callee, scope, func):
        launched = self._params_launched(callee)
        if not launched:
            return
        cscope = self.scope_of.get(callee)
        order = list(cscope.param_order)
        if _applies_forward(func, callee):
            order = order[1:]  # Fn.apply(x, kernel) -> forward(ctx, x, kernel)
        elif cscope.self_name and isinstance(func, ast.Attribute) and order and order[0] == cscope.self_name:
            order = order[1:]
        bound = dict(zip(order, call.args))
        bound.update({k.arg: k.value for k in call.keywords if k.arg})
        for p in launched:
            if p in bound:
                for r in self.resolve(bound[p], scope):
                    if r.kind == "kernel":
                        self._record_launch(r.value, call.lineno)
