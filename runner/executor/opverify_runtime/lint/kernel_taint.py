"""Type 4: does a launched kernel compute, or only move data? A taint analysis over the
kernel's triton.language code."""
import ast

from .names import (COMPUTED, LOADED, NONE, TL_DATA_MOVEMENT, TL_INDEX, TL_RANDOM, VALUE_METADATA_ATTRS,
                    VALUE_METHODS_DATA_MOVEMENT)
from .symbols import _root


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
        ctx = {"computes": False, "depth": depth, "scope": scope, "reduced": set()}
        body = [n for stmt in fn.body for n in ast.walk(stmt)]
        for _ in range(32):
            before = dict(env)
            for node in body:
                if isinstance(node, ast.Assign):
                    t = self.eval(node.value, env, ctx)
                    for target in node.targets:
                        self._assign(target, t, env)
                    if self._tl_compute(node.value, env, ctx):  # pos = tl.argmax(x, 0)
                        ctx["reduced"].update(n.id for t in node.targets for n in ast.walk(t) if isinstance(n, ast.Name))
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
            if name == "load":  # a gather at an index the kernel computed (argmax, a random draw) computes
                return COMPUTED if self._computed_address(self._arg(call, 0, "pointer"), env, ctx) else LOADED
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

    def _tl_compute(self, e, env, ctx):
        """e is a triton.language call that computes on the kernel's data (tl.argmax(x, 0),
        tl.rand(seed, offs)): not a load, an index, data movement or an atomic."""
        if not isinstance(e, ast.Call):
            return False
        kind = self._call_kind(e.func, ctx)
        if kind[0] != "tl" or kind[1] in TL_INDEX or kind[1] in TL_DATA_MOVEMENT or \
                kind[1] in ("load", "store", "where") or kind[1].startswith("atomic_"):
            return False
        return self._call(e, env, ctx) == COMPUTED

    def _computed_address(self, pointer, env, ctx):
        """The address reads at an index such a call gave (`Ids + pos`, pos = tl.argmax(...)),
        not only at offsets (address arithmetic on a loaded index stays data movement)."""
        return pointer is not None and any(
            isinstance(n, ast.Name) and n.id in ctx["reduced"] or self._tl_compute(n, env, ctx)
            for n in ast.walk(pointer))

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
