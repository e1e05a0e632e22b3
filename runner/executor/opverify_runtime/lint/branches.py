"""Branches decided by literal arguments (types 2 and 3 of the reachability walk).

A launcher such as `def forward_launch(x, reduction): ... if reduction == "sum": return out.sum()`
called as `forward_launch(x, "none")` never runs `out.sum()`. The walk scans each function once
per known context (its parameters bound to the constants a call site passes, or to their
defaults where the call omits them) and skips the `if`/`elif`/`else` branches and `a if c else b`
arms whose test those constants decide. Kept small, bounded and conservative:

* values are constants only (str, int, float, bool, None, bytes, tuples of them, tl.constexpr of
  one), evaluated from literals, the context, locals assigned straight-line before the test, and
  module-level names bound exactly once (a dict or tuple literal may be indexed by a constant when
  its module only ever reads it with `name[...]`), in a module that never names globals(), vars(),
  setattr, `__globals__`, `__dict__` or `sys.modules`;
* a test is decided only by ==, !=, in, not in, `is (not) None`, and/or/not over those (and a
  conditional expression whose test they decide); anything else (a call, an attribute of an
  argument such as `x.dtype`, a name assigned in a loop or a try) leaves both arms;
* what follows a statement no path runs past (`return`, `raise`, `break`, `continue`, or an
  `if` whose live arms all end so) is not reached: `if sorter is None: return` ends the
  function for sorter=None;
* a function is scanned in at most MAX_CONTEXTS contexts, then once with none known.

Assumed, as the rest of the walk assumes: a decorated function is called with the arguments its
caller passes, and a module's constants are not reassigned from another module (the runtime
evidence sees what really runs). Mixed into analysis._Analysis."""
import ast
import operator

from .values import (CONTAINERS, OPAQUE, OPAQUE_CALLS, UNKNOWN, Constexpr, EnumMember, Keywords, Opaque, _equal,
                     _plain, _same)

ENDS = None  # what _live_block gives when no path runs past the block's end
ENDING = (ast.Return, ast.Raise, ast.Break, ast.Continue)
# A module that can write its globals by name has no constants.
WRITES_BY_NAME = " writes globals by name"
GLOBALS_WRITERS = {"globals", "vars", "setattr", "exec", "eval", "__import__", "__builtins__"}
GLOBALS_ATTRS = {"__globals__", "__dict__", "modules", "__setattr__", "f_globals"}
MAX_CONTEXTS = 4
MAX_DEPTH = 12
CONSTEXPR_PATHS = ("triton.language.constexpr", "triton.language.core.constexpr", "triton.constexpr")
CONSTANT_TYPES = (str, int, float, bool, type(None), bytes)
ORDERINGS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
ENUM_BASES = {"enum.Enum": "plain", "enum.Flag": "plain", "enum.IntEnum": "valued", "enum.StrEnum": "valued",
              "enum.IntFlag": "valued"}
CONVERSIONS = {"builtins.float": float, "builtins.int": int, "builtins.bool": bool, "builtins.str": str}
NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
                 ast.DictComp, ast.GeneratorExp)


def _assigned_names(node):
    """Every name `node` may bind or unbind (over-approximated through nested scopes)."""
    names = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)):
            names.add(n.id)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in n.names)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            names.update(n.names)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            names.add(n.name)
        elif hasattr(ast, "MatchAs") and isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            names.add(n.name)
        elif hasattr(ast, "MatchMapping") and isinstance(n, ast.MatchMapping) and n.rest:
            names.add(n.rest)
    return names


def _without(env, names):
    return {k: v for k, v in env.items() if k not in names} if names & env.keys() else env


class _Branches:
    # ---- the nodes of a function that can run under a context --------------------------------

    def _live_nodes(self, fn, bound):
        """[(node, env)] of fn's body that may run when its parameters hold `bound`: env maps
        the names known to be constants where the node is evaluated."""
        out = []
        scope = self.scope_of.get(fn, self.module)
        if isinstance(fn, ast.Lambda):
            self._live_expr(fn.body, dict(bound), out, scope)
        else:
            self._live_block(fn.body, dict(bound), out, scope)
        return out

    def _live_block(self, stmts, env, out, scope):
        """The env after the block, or ENDS when no path runs past its end (each returns,
        raises, breaks or continues): the statements after such a statement never run."""
        for stmt in stmts:
            env = self._live_stmt(stmt, env, out, scope)
            if env is ENDS:
                break
        return env

    def _live_stmt(self, stmt, env, out, scope):
        if isinstance(stmt, ast.If):
            out.append((stmt, env))
            self._live_expr(stmt.test, env, out, scope)
            truth = self._truth(stmt.test, env, scope)
            after_body = after_else = ENDS
            if truth is not False:
                after_body = self._live_block(stmt.body, dict(env), out, scope)
            if truth is not True:
                after_else = self._live_block(stmt.orelse, dict(env), out, scope)
            if after_body is ENDS or after_else is ENDS:  # `if dim is None: return ...` and the rest
                return after_else if after_body is ENDS else after_body
            return {k: v for k, v in after_body.items() if k in after_else and _same(after_else[k], v)}
        if isinstance(stmt, ENDING):
            self._live_expr(stmt, env, out, scope)
            return ENDS
        if isinstance(stmt, NESTED_SCOPES):  # a nested def or class: scanned whole, nothing known inside
            out.extend((n, {}) for n in ast.walk(stmt))
            return _without(env, _assigned_names(stmt))
        if isinstance(stmt, (ast.For, ast.AsyncFor)) and self._value(stmt.iter, env, scope) in ((), ""):
            out.append((stmt, env))  # `for v in vectors or ():` with vectors None: the body never runs
            self._live_expr(stmt.iter, env, out, scope)
            return self._live_block(stmt.orelse, dict(env), out, scope)
        if any(isinstance(v, list) and v and isinstance(v[0], ast.stmt) for _, v in ast.iter_fields(stmt)):
            # a loop, with, try or match: what it assigns is unknown in it and after it
            env = _without(env, _assigned_names(stmt))
            out.append((stmt, env))
            for _, value in ast.iter_fields(stmt):
                items = value if isinstance(value, list) else [value]
                stmts = [v for v in items if isinstance(v, ast.stmt)]
                if stmts:
                    self._live_block(stmts, dict(env), out, scope)
                for v in items:
                    if isinstance(v, ast.AST) and not isinstance(v, ast.stmt):
                        out.extend((n, env) for n in ast.walk(v))
            return env
        walrus = {n.target.id for n in ast.walk(stmt) if isinstance(n, ast.NamedExpr)}
        here = _without(env, walrus)
        self._live_expr(stmt, here, out, scope)
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
            if isinstance(stmt, ast.AnnAssign) and stmt.value is not None else []
        value = self._value(stmt.value, here, scope) if targets else UNKNOWN
        env = _without(env, _assigned_names(stmt))
        if value is not UNKNOWN and all(isinstance(t, ast.Name) for t in targets):
            env = dict(env)
            env.update({t.id: value for t in targets})
        elif len(targets) == 1 and isinstance(targets[0], ast.Tuple) and isinstance(stmt.value, ast.Tuple) \
                and len(targets[0].elts) == len(stmt.value.elts):  # lo, hi = float(min), float(max)
            env = dict(env)
            for t, v in zip(targets[0].elts, stmt.value.elts):
                known = self._value(v, here, scope)
                if isinstance(t, ast.Name) and known is not UNKNOWN:
                    env[t.id] = known
        return env

    def _live_expr(self, expr, env, out, scope):
        stack = [(expr, env)]
        while stack:
            node, here = stack.pop()
            out.append((node, here))
            if isinstance(node, NESTED_SCOPES) and node is not expr:
                out.extend((n, {}) for n in ast.walk(node) if n is not node)
                continue
            if isinstance(node, ast.IfExp):
                truth = self._truth(node.test, here, scope)
                children = [node.test] + ([node.body] if truth is not False else []) + \
                    ([node.orelse] if truth is not True else [])
            elif isinstance(node, ast.BoolOp):  # `skip and not torch.any(g)` with skip False: not evaluated
                children = []
                for value in node.values:
                    children.append(value)
                    if self._truth(value, here, scope) is isinstance(node.op, ast.Or):
                        break
            else:
                children = list(ast.iter_child_nodes(node))
            stack.extend((c, here) for c in reversed(children))

    # ---- constants ---------------------------------------------------------------------------

    def _truth(self, test, env, scope):
        """True/False when the constants decide `test`, else None."""
        value = self._value(test, env, scope)
        return None if value is UNKNOWN or isinstance(value, Opaque) else bool(_plain(value))

    def _value(self, expr, env, scope, depth=0):
        """The constant `expr` is under `env` (names known in its function), or UNKNOWN."""
        if expr is None or depth > MAX_DEPTH:
            return UNKNOWN
        if isinstance(expr, ast.Constant):
            return expr.value if isinstance(expr.value, CONSTANT_TYPES) else UNKNOWN
        if isinstance(expr, ast.Name):
            if expr.id in env:
                return env[expr.id]
            return self._module_value(expr.id, scope, depth)
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name) \
                and f"{expr.value.id}.{expr.attr}" in env:  # self.reduction, as its constructor stored it
            return env[f"{expr.value.id}.{expr.attr}"]
        if isinstance(expr, ast.Attribute) and expr.attr == "value":
            base = self._value(expr.value, env, scope, depth + 1)
            return base.value if isinstance(base, (Constexpr, EnumMember)) else UNKNOWN
        if isinstance(expr, ast.Attribute):  # Policy.NONE, Config.MODE
            return self._class_constant(expr, scope, depth)
        if isinstance(expr, ast.Subscript):
            return self._indexed(expr, env, scope, depth)
        if isinstance(expr, (ast.Tuple, ast.List, ast.Set)):
            items = [self._value(e, env, scope, depth + 1) for e in expr.elts]
            if any(i is UNKNOWN or isinstance(i, Opaque) for i in items):
                return OPAQUE.get(CONTAINERS.get(type(expr)), UNKNOWN)
            return tuple(items)
        if type(expr) in CONTAINERS:  # {}, [f(v) for v in xs]
            return OPAQUE[CONTAINERS[type(expr)]]
        if isinstance(expr, ast.Compare):
            return self._compare(expr, env, scope, depth)
        if isinstance(expr, ast.IfExp):  # sorter.contiguous() if sorter is not None else None
            truth = self._truth(expr.test, env, scope)
            return UNKNOWN if truth is None else self._value(expr.body if truth else expr.orelse, env, scope, depth + 1)
        if isinstance(expr, ast.BoolOp):
            for v in expr.values[:-1]:
                x = self._value(v, env, scope, depth + 1)
                if x is UNKNOWN or isinstance(x, Opaque):
                    return UNKNOWN
                if bool(_plain(x)) == isinstance(expr.op, ast.Or):
                    return x
            return self._value(expr.values[-1], env, scope, depth + 1)
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            x = self._value(expr.operand, env, scope, depth + 1)
            return UNKNOWN if x is UNKNOWN or isinstance(x, Opaque) else not bool(_plain(x))
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):  # dim=-1
            x = self._value(expr.operand, env, scope, depth + 1)
            if isinstance(x, (int, float)) and not isinstance(x, bool):
                return -x if isinstance(expr.op, ast.USub) else x
            return UNKNOWN
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr == "get" \
                and 1 <= len(expr.args) <= 2 and not expr.keywords:  # kwargs.get("check", False)
            keywords = self._value(expr.func.value, env, scope, depth + 1)
            key = self._value(expr.args[0], env, scope, depth + 1)
            if isinstance(keywords, Keywords) and isinstance(key, str):
                default = self._value(expr.args[1], env, scope, depth + 1) if len(expr.args) == 2 else None
                return keywords.get(key, default)
            return UNKNOWN
        if isinstance(expr, ast.Call):
            kinds = {OPAQUE_CALLS.get(r.value) for r in self.resolve(expr.func, scope) if r.kind == "path"}
            if len(kinds) == 1 and None not in kinds:
                return OPAQUE[kinds.pop()]
        if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords:
            return self._converted(expr, env, scope, depth)
        return UNKNOWN

    def _converted(self, call, env, scope, depth):
        """tl.constexpr(c), and float(c)/int(c)/bool(c)/str(c) of a known constant (min_val = float(min))."""
        paths = {r.value for r in self.resolve(call.func, scope) if r.kind == "path"}
        x = self._value(call.args[0], env, scope, depth + 1)
        if x is UNKNOWN or isinstance(x, (Opaque, Constexpr)) or len(paths) != 1:
            return UNKNOWN
        (path,) = paths
        if path in CONSTEXPR_PATHS:
            return Constexpr(x)
        convert = CONVERSIONS.get(path)
        try:
            return convert(x) if convert is not None else UNKNOWN
        except (TypeError, ValueError, OverflowError):
            return UNKNOWN

    def _compare(self, expr, env, scope, depth):
        left = self._value(expr.left, env, scope, depth + 1)
        if left is UNKNOWN:
            return UNKNOWN
        for op, right_node in zip(expr.ops, expr.comparators):
            right = self._value(right_node, env, scope, depth + 1)
            if right is UNKNOWN:
                return UNKNOWN
            a, b = _plain(left), _plain(right)
            if (isinstance(a, Opaque) or isinstance(b, Opaque)) and not (isinstance(op, (ast.Is, ast.IsNot))
                                                                      and (a is None or b is None)):
                return UNKNOWN  # not None; nothing else about it is known
            if isinstance(op, (ast.Eq, ast.NotEq)) or isinstance(op, (ast.Is, ast.IsNot)) and \
                    isinstance(a, EnumMember) and isinstance(b, EnumMember) and a.cls is b.cls:
                ok = _equal(a, b)  # (members of one enum: `is` is their equality, aliases included)
                if ok is UNKNOWN:
                    return UNKNOWN
                ok = ok if isinstance(op, (ast.Eq, ast.Is)) else not ok
            elif isinstance(op, (ast.In, ast.NotIn)) and isinstance(b, (tuple, str)):
                if isinstance(b, str) and not isinstance(a, str):
                    return UNKNOWN
                found = [_equal(a, _plain(x)) for x in b] if isinstance(b, tuple) else [a in b]
                if True not in found and UNKNOWN in found:
                    return UNKNOWN
                ok = (True in found) == isinstance(op, ast.In)
            elif isinstance(op, (ast.Is, ast.IsNot)) and (a is None or b is None):
                ok = (a is b) if isinstance(op, ast.Is) else (a is not b)
            elif isinstance(op, tuple(ORDERINGS)) and all(isinstance(v, (int, float)) for v in (a, b)):
                ok = ORDERINGS[type(op)](a, b)  # dropout_p > 0.0
            else:
                return UNKNOWN
            if not ok:
                return False
            left = right
        return True

    def _indexed(self, expr, env, scope, depth):
        key = self._value(expr.slice, env, scope, depth + 1)
        if key is UNKNOWN or not isinstance(expr.value, ast.Name) or expr.value.id in env:
            return UNKNOWN
        found = self._module_literal(expr.value.id, scope)
        if found is None:
            return UNKNOWN
        literal, module_scope = found
        key = _plain(key)
        if isinstance(literal, ast.Dict):
            for k, v in zip(literal.keys, literal.values):
                known = self._value(k, {}, module_scope, depth + 1) if k is not None else UNKNOWN
                if known is UNKNOWN:
                    return UNKNOWN  # a ** unpacking or a computed key: the table is not known
                if _same(_plain(known), key):
                    return self._value(v, {}, module_scope, depth + 1)
            return UNKNOWN
        if isinstance(key, int) and not isinstance(key, bool) and -len(literal.elts) <= key < len(literal.elts):
            item = literal.elts[key]
            return UNKNOWN if isinstance(item, ast.Starred) else self._value(item, {}, module_scope, depth + 1)
        return UNKNOWN

    def _class_constant(self, expr, scope, depth):
        """`Cls.NAME` where Cls is a class the lint read and its body binds NAME once to a
        constant (an enum's member: an EnumMember), nothing in the module assigns `*.NAME`, and
        the module does not write by name; else UNKNOWN."""
        refs = self.resolve(expr.value, scope)
        if len(refs) != 1 or refs[0].kind != "class" or refs[0].value is None:
            return UNKNOWN
        info = refs[0].value
        tree = self._module_tree(info)
        bindings = info.scope.bindings.get(expr.attr, [])
        if tree is None or len(bindings) != 1 or bindings[0].kind != "expr":
            return UNKNOWN
        if self._module_uses(tree)[0].get(WRITES_BY_NAME) or expr.attr in self._attributes_set(tree):
            return UNKNOWN
        value = bindings[0].value
        if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
            return UNKNOWN  # mutable
        known = self._value(value, {}, info.def_scope, depth + 1)
        kind = self._enum_kind(info)
        if kind is None:
            return UNKNOWN if known is UNKNOWN or isinstance(known, EnumMember) else known
        auto = isinstance(value, ast.Call) and any(
            r.kind == "path" and r.value == "enum.auto" for r in self.resolve(value.func, info.def_scope))
        if known is UNKNOWN and not auto:
            return UNKNOWN
        return EnumMember(info, expr.attr, known, kind == "plain")

    def _enum_kind(self, info):
        """"plain" for a subclass of Enum or Flag, "valued" for IntEnum, StrEnum or IntFlag or
        an Enum mixed with a value type (`class Backend(str, Enum)`: its members equal their
        values), None for a class that is no enum the lint can see."""
        kind, mixed = None, False
        for c in self._mro(info):
            for base in c.node.bases:
                for r in self.resolve(base, c.def_scope):
                    if r.kind == "path" and r.value in ENUM_BASES:
                        kind = kind or ENUM_BASES[r.value]
                    elif r.kind == "path" and r.value in ("builtins.str", "builtins.int", "builtins.float",
                                                          "builtins.bytes"):
                        mixed = True  # a member then equals its value
        return "valued" if kind == "plain" and mixed else kind

    def _module_scope(self, scope, name):
        """The module Scope whose binding of `name` a function sees, if no function or class
        scope on the way binds it; else None."""
        s = scope
        while s is not None and s.kind != "module":
            if name in s.bindings or name in s.params:
                return None
            s = s.outer
        return s

    def _single_module_binding(self, name, scope):
        module_scope = self._module_scope(scope, name)
        if module_scope is None or module_scope.node is None:
            return None
        bindings = module_scope.bindings.get(name, [])
        if len(bindings) != 1 or bindings[0].kind != "expr":
            return None
        stores, reads = self._module_uses(module_scope.node)
        if stores.get(name, 0) != 1 or stores.get(WRITES_BY_NAME):
            return None  # reassigned, augmented, declared global, deleted, or a loop target
        return bindings[0].value, module_scope, reads.get(name, True)

    def _module_value(self, name, scope, depth):
        found = self._single_module_binding(name, scope)
        if found is None:
            return UNKNOWN
        value, module_scope, _ = found
        if isinstance(value, (ast.Dict, ast.List, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
            return UNKNOWN  # mutable: only indexed by _indexed, when never mutated
        return self._value(value, {}, module_scope, depth + 1)

    def _module_literal(self, name, scope):
        found = self._single_module_binding(name, scope)
        if found is None or not isinstance(found[0], (ast.Dict, ast.Tuple, ast.List)):
            return None
        value, module_scope, only_indexed = found
        if not isinstance(value, ast.Tuple) and not only_indexed:
            return None  # a dict or list used otherwise than name[...] may be changed
        return value, module_scope

    def _attributes_set(self, tree):
        """The attribute names the module assigns or deletes anywhere (`Policy.X = 5`), cached."""
        cache = self.__dict__.setdefault("_attributes_set_cache", {})
        if id(tree) not in cache:
            cache[id(tree)] = {n.attr for n in ast.walk(tree)
                               if isinstance(n, ast.Attribute) and isinstance(n.ctx, (ast.Store, ast.Del))}
        return cache[id(tree)]

    def _module_uses(self, tree):
        """({name: times bound anywhere in the module}, {name: every read is name[...]}), cached."""
        cache = self.__dict__.setdefault("_module_use_cache", {})
        if id(tree) not in cache:
            stores, indexed = {}, {}
            for node in ast.walk(tree):
                if isinstance(node, ast.Name) and node.id in GLOBALS_WRITERS or \
                        isinstance(node, ast.Attribute) and node.attr in GLOBALS_ATTRS:
                    stores[WRITES_BY_NAME] = 1
                if isinstance(node, ast.Name):
                    if isinstance(node.ctx, (ast.Store, ast.Del)):
                        stores[node.id] = stores.get(node.id, 0) + 1
                    else:
                        parent = self.parents.get(node)
                        ok = isinstance(parent, ast.Subscript) and parent.value is node and \
                            isinstance(parent.ctx, ast.Load)
                        indexed[node.id] = indexed.get(node.id, True) and ok
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    stores[node.name] = stores.get(node.name, 0) + 1
                elif isinstance(node, (ast.Import, ast.ImportFrom)):
                    for a in node.names:
                        top = (a.asname or a.name).split(".")[0]
                        stores[top] = stores.get(top, 0) + 1
                elif isinstance(node, (ast.Global, ast.Nonlocal)):
                    for n in node.names:
                        stores[n] = stores.get(n, 0) + 2
                elif isinstance(node, ast.ExceptHandler) and node.name:
                    stores[node.name] = stores.get(node.name, 0) + 1
            cache[id(tree)] = (stores, indexed)
        return cache[id(tree)]
