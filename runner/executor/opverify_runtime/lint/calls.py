"""What a call gives and binds: the constants a call site binds in the function it calls
(branches.py decides the callee's branches with them), what it passes for a parameter, and the
launchers a call of a function gives back. Mixed into analysis._Analysis."""
import ast

from .branches import WRITES_BY_NAME
from .values import UNKNOWN, Keywords, Opaque
from .symbols import _applies_forward

# What torch's layers keep of their constructors' arguments: layer -> (the position of `bias`
# after self, counting in_features/in_channels first). `bias=False` leaves self.bias None.
TORCH_BIAS_POSITION = {"Linear": 2, "Bilinear": 3, "Conv1d": 7, "Conv2d": 7, "Conv3d": 7,
                       "ConvTranspose1d": 7, "ConvTranspose2d": 7, "ConvTranspose3d": 7}


def _super_init_call(init):
    """The `super().__init__(...)` call at the top level of an __init__, or None."""
    for stmt in init.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "__init__" \
                and isinstance(call.func.value, ast.Call) and isinstance(call.func.value.func, ast.Name) \
                and call.func.value.func.id == "super":
            return call
    return None


def _torch_base_options(layer, call, value_of):
    """{attr: constant} the torch layer `layer` keeps of `call`'s arguments (value_of gives an
    argument's constant, or UNKNOWN): a loss's `reduction` (a keyword; unknown beside the legacy
    size_average/reduce or any positional argument), `self.bias = None` for `bias=False`."""
    name = layer.rsplit(".", 1)[-1]
    keywords = {k.arg: k.value for k in call.keywords}
    if None in keywords or any(isinstance(a, ast.Starred) for a in call.args):
        return {}
    if name.endswith("Loss"):
        if call.args or {"size_average", "reduce"} & set(keywords):
            return {}
        return {"reduction": value_of(keywords["reduction"]) if "reduction" in keywords else "mean"}
    at = TORCH_BIAS_POSITION.get(name)
    if at is None:
        return {}
    given = keywords.get("bias", call.args[at] if at < len(call.args) else None)
    return {"bias": None} if given is not None and value_of(given) is False else {}


RETURNED_KINDS = ("kernel", "kernel_launcher", "wrapped", "generated", "instance")  # an instance: a factory's layer


def _only_read_and_forwarded(fn, name, parents):
    """Whether every use of `name` in `fn` is `name.get(...)` or `**name` in a call (so it stays
    what the call passed), and nothing rebinds it."""
    for node in ast.walk(fn):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return False
        if not (isinstance(node, ast.Name) and node.id == name):
            continue
        if not isinstance(node.ctx, ast.Load):
            return False
        parent = parents.get(node)
        if isinstance(parent, ast.keyword) and parent.arg is None:
            continue
        if isinstance(parent, ast.Attribute) and parent.attr == "get":
            continue
        return False
    return True


def _return_values(fn):
    """The expressions fn returns (a lambda's body), not those of functions nested in it."""
    if isinstance(fn, ast.Lambda):
        return [fn.body]
    out, stack = [], list(fn.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return) and node.value is not None:
            out.append(node.value)
        elif not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return out


class _Calls:
    def _returned(self, fn, seen, depth, index=None, call=None, call_scope=None):
        """The launchers a call of fn gives back (RETURNED_KINDS), from its `return`
        statements; with `index`, the index-th item of a returned tuple; a parameter it returns
        (`return wrap_triton(kernel) if traceable else kernel`) is what `call` passed for it."""
        if ("returns", fn) in seen:
            return []
        seen, fscope, out = seen | {("returns", fn)}, self.scope_of.get(fn, self.module), []
        for value in _return_values(fn):
            if index is not None and isinstance(value, (ast.Tuple, ast.List)):
                value = value.elts[index] if index < len(value.elts) else None
            for x in self.resolve(value, fscope, seen, depth + 1):
                if x.kind == "param" and call is not None and x.value[0] is fn:
                    out += [y for y in self._passed(call, fn, x.value[1], call_scope, seen, depth)
                            if y.kind in RETURNED_KINDS]
                elif x.kind in RETURNED_KINDS:
                    out.append(x)
        return out

    def _unpacked(self, expr, scope, seen, depth):
        return [x for r in self.resolve(expr.call.func, scope, seen, depth + 1) if r.kind == "func"
                for x in self._returned(r.value, seen, depth, expr.index)]

    def _argument(self, call, callee, name):
        """The expression `call` passes for the callee's parameter `name` (by keyword, else by
        its position), or None (not passed, or in a starred argument)."""
        order = self.scope_of[callee].param_order if callee in self.scope_of else []
        for k in call.keywords:
            if k.arg == name:
                return k.value
        at = order.index(name) if name in order else len(call.args)
        return call.args[at] if at < len(call.args) and not isinstance(call.args[at], ast.Starred) else None

    def _passed(self, call, callee, name, scope, seen, depth):
        """What `call` passes for the callee's parameter `name`, resolved where the call is; []
        where that cannot be told (a starred argument, a method called through its instance)."""
        cscope = self.scope_of.get(callee)
        if cscope is None or cscope.self_name or any(isinstance(a, ast.Starred) for a in call.args):
            return []
        argument = self._argument(call, callee, name)
        return [] if argument is None else self.resolve(argument, scope, seen, depth + 1)

    def _call_keywords(self, call, env, scope):
        """(name, value) of each keyword the call passes, those of a forwarded `**kwargs` whose
        keywords are known included; (None, UNKNOWN) for a `**mapping` that is not known."""
        for k in call.keywords:
            if k.arg is not None:
                yield k.arg, self._value(k.value, env, scope)
                continue
            mapping = self._value(k.value, env, scope)
            if isinstance(mapping, Keywords):
                yield from mapping.items
            else:
                yield None, UNKNOWN

    def _call_context(self, call, callee, func, scope, env, same_call, instance_call=False):
        """{param: constant} the call binds in `callee` (passed constants, defaults of omitted
        parameters), or {} when the arguments cannot be matched to the parameters: the callee
        reached through a partial, a stored attribute or a wrapper (not `same_call`) may take
        them otherwise. `instance_call`: the call is of an instance, `callee` the method that
        call runs with the same arguments (a module's forward, a class's __call__)."""
        cscope = self.scope_of.get(callee)
        if cscope is None or not same_call:
            return {}
        order = list(cscope.param_order)
        if instance_call:
            if cscope.self_kind != "self" or not order or order[0] != cscope.self_name:
                return {}
            order = order[1:]
        elif _applies_forward(func, callee):
            order = order[1:]  # autograd.Function.apply(*args) -> forward(ctx, *args)
        elif cscope.self_name and order and order[0] == cscope.self_name:
            if not isinstance(func, ast.Attribute):
                return {}
            kinds = {r.kind for r in self.resolve(func.value, scope)}
            bound_method = cscope.self_kind == "class" or (kinds and kinds <= {"self", "instance", "super"})
            if not bound_method and kinds != {"class"}:
                return {}
            if bound_method:
                order = order[1:]
        bound, passed = {}, set()
        positional_known = True
        args = [a for a in call.args if not (isinstance(a, ast.Starred) and self._value(a.value, env, scope) == ())]
        for i, arg in enumerate(args):
            if isinstance(arg, ast.Starred):
                positional_known = False
                break
            if i < len(order):
                bound[order[i]] = self._value(arg, env, scope)
                passed.add(order[i])
        keywords_known, extra = True, {}
        for name, value in self._call_keywords(call, env, scope):
            if name is None:
                keywords_known = False
            elif name in cscope.params:
                bound[name] = value
                passed.add(name)
            else:
                extra[name] = value
        if positional_known and keywords_known:
            for p, default in cscope.params.items():
                if p not in passed and default is not None:
                    bound[p] = self._value(default, {}, self.enclosing.get(default, self.module))
        star, double_star = callee.args.vararg, callee.args.kwarg
        if star is not None and positional_known and len(args) <= len(order):
            bound[star.arg] = ()  # f(*args) with nothing beyond the named parameters
        if double_star is not None and keywords_known and UNKNOWN not in extra.values() \
                and _only_read_and_forwarded(callee, double_star.arg, self.parents):
            bound[double_star.arg] = Keywords(extra.items())
        return {p: v for p, v in bound.items() if v is not UNKNOWN and p in cscope.params}

    def _sequential_modules(self, arg, scope, seen, depth):
        """The modules a torch.nn.Sequential argument gives it: a module, or an OrderedDict of
        (name, module) pairs."""
        if isinstance(arg, ast.Call) and arg.args and any(
                r.kind == "path" and r.value == "collections.OrderedDict" for r in self.resolve(arg.func, scope)):
            arg = arg.args[0]
        return [x for x in self.resolve(arg, scope, seen, depth + 1) if x.kind == "instance"]

    def _instance_options(self, ref, method):
        """{"self.attr": constant} an instance keeps from its constructor call, for `method`'s
        branches (attorch's `MSELoss(reduction='none')`: the torch reduction not taken): each
        attribute the class's own __init__ stores where the call's constants leave it one store
        (`if dropout_p > 0.0: self.drop = ... else: self.drop = None`); and what a torch base
        keeps of the arguments it is given (the constructor call where the class has no
        __init__, else its __init__'s `super().__init__(...)`): a loss's `reduction`, a
        Linear's or convolution's `bias=False` as `self.bias = None`. Only an attribute nothing
        else assigns, in the class's module or the implementation's, neither of which writes
        attributes by name (setattr, __dict__)."""
        made, info, mscope = ref.made_by, ref.value, self.scope_of.get(method)
        if made is None or info is None or mscope is None or not mscope.self_name:
            return {}
        call, scope = made
        inits = [m.value for m in self._class_member(info, "__init__", frozenset(), 0, instance=False) or []
                 if m.kind == "func"]
        stored, base_call, env = {}, call if not inits else None, {}
        if len(inits) == 1 and inits[0] in self.scope_of:
            init = inits[0]
            env = self._call_context(call, init, call.func, scope, {}, ref.same_call, instance_call=True)
            live = {id(node): here for node, here in self._live_nodes(init, env)}
            for c in self._mro(info):
                for attr, entries in c.self_attrs.items():
                    reached = [(value, where) for value, where, _ in entries if id(value) in live]
                    if len(reached) == 1 and all(where.node is init for _, where, _ in entries):
                        value, where = reached[0]  # the one store the call's constants leave
                        stored[attr] = self._value(value, live[id(value)], where)
            base_call, scope = _super_init_call(init), self.scope_of[init]
        layer = self._torch_layer_base(info)
        if base_call is not None and layer is not None:
            for attr, value in _torch_base_options(layer, base_call, lambda e: self._value(e, env, scope)).items():
                stored.setdefault(attr, value)
        rewritten = self._attributes_rewritten(info)
        return {f"{mscope.self_name}.{attr}": value for attr, value in stored.items()
                if value is not UNKNOWN and not isinstance(value, Opaque)
                and rewritten is not None and attr not in rewritten}

    def _attributes_rewritten(self, info):
        """The attribute names something other than the class's own `self.attr =` stores assigns,
        in the class's module or the implementation's; None (every one) where either writes
        attributes by name. Counted once per class: each instance call asks."""
        cache = self.__dict__.setdefault("_attributes_rewritten_cache", {})
        if id(info) in cache:
            return cache[id(info)]
        modules = {id(t): t for t in (self._module_tree(info), self.tree) if t is not None}
        mro, writes, owned = self._mro(info), {}, {}
        for tree in modules.values():
            for n in ast.walk(tree):
                if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del)) \
                        and not self._another_class_own(n, mro):
                    writes[n.attr] = writes.get(n.attr, 0) + 1
        for c in mro:
            for attr, entries in c.self_attrs.items():
                owned[attr] = owned.get(attr, 0) + len(entries)
        by_name = any(self._module_uses(t)[0].get(WRITES_BY_NAME) for t in modules.values())
        cache[id(info)] = None if by_name else {a for a in set(writes) | set(owned) if writes.get(a, 0) != owned.get(a, 0)}
        return cache[id(info)]

    def _another_class_own(self, node, mro):
        """Whether `obj.attr = ...` at `node` stores on another object than an instance of
        `mro`'s class: `self` in a method of a class outside `mro`, or an autograd.Function's
        `ctx` (a static forward/backward/setup_context's first parameter)."""
        fn = self.parents.get(node)
        while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            fn = self.parents.get(fn)
        fscope = self.scope_of.get(fn)
        if fscope is None or fscope.cls is None or not isinstance(node.value, ast.Name):
            return False
        if fscope.self_name is None and fn.name in ("forward", "backward", "setup_context") and fn.args.args:
            return node.value.id == fn.args.args[0].arg
        return fscope.cls not in mro and node.value.id == fscope.self_name

    def _module_tree(self, info):
        """The module (ast.Module) a class is defined in."""
        s = info.def_scope
        while s is not None and s.kind != "module":
            s = s.outer
        return s.node if s is not None else None

