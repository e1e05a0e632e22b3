"""Python's rules for the names of a module once it has run, as pure functions over its
parsed source (no analysis state): which statement's binding of a name is the module's
attribute afterwards (the last one; earlier ones too where the last is conditional), and
what `from module import *` exports (`__all__` when the module defines it as a literal,
else every bound name not starting with `_`).

library.py applies them to the declared packages: `pkg.name` is the package's attribute
(whatever its `__init__` bound last, star imports included) before it is the submodule
`pkg/name.py`, which it is only when nothing in the package binds `name`."""
import ast

UNKNOWN_ALL = "unknown"  # __all__ is assigned something the lint cannot read as a list of strings
COMPOUND = (ast.If, ast.Try, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith) + (
    (ast.Match,) if hasattr(ast, "Match") else ()) + ((ast.TryStar,) if hasattr(ast, "TryStar") else ())


def conditional_spans(tree):
    """[(first line, last line)] of the module's top-level compound statements: a binding
    inside one may not happen."""
    if tree is None:
        return []
    return [(stmt.lineno, getattr(stmt, "end_lineno", stmt.lineno)) for stmt in tree.body
            if isinstance(stmt, COMPOUND)]


def last_binders(events, spans):
    """The events (line, payload) whose binding the name holds after the module ran: the last
    one outside a compound statement and every one after it; all of them if none is outside."""
    ordered = sorted(events, key=lambda event: event[0])
    chosen = []
    for line, payload in reversed(ordered):
        chosen.append(payload)
        if not any(first <= line <= last for first, last in spans):
            break
    return list(reversed(chosen))


def dunder_all(tree):
    """The names `__all__` lists (a set), None when the module has no `__all__`, or
    UNKNOWN_ALL when it is built in a way the lint cannot read (then the public-name rule,
    an over-approximation, applies)."""
    if tree is None:
        return None
    names, seen = set(), False
    for node in _module_statements(tree.body):
        if isinstance(node, ast.Expr):
            node = node.value
        value = _all_value(node)
        if value is None:
            continue
        seen = True
        listed = _string_items(value)
        if listed is None:
            return UNKNOWN_ALL
        names.update(listed)
    return names if seen else None


def _module_statements(body):
    """The statements run at import: the module's own, and those inside its compound
    statements (an `if`, a `try`), never a function's or a class's."""
    for stmt in body:
        yield stmt
        if isinstance(stmt, COMPOUND):
            for field in ("body", "orelse", "finalbody", "handlers", "cases"):
                for inner in getattr(stmt, field, None) or []:
                    yield from _module_statements(getattr(inner, "body", None) or [inner]) \
                        if isinstance(inner, (ast.ExceptHandler, getattr(ast, "match_case", ast.ExceptHandler))) \
                        else _module_statements([inner])


def _all_value(node):
    """The expression a statement adds to or sets `__all__` to, or None."""
    if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets):
        return node.value
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name) \
            and node.target.id == "__all__":
        return node.value if node.value is not None else ast.List(elts=[])
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("extend", "append") \
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "__all__":
        arg = node.args[0] if node.args else None
        return ast.List(elts=[arg]) if node.func.attr == "append" and arg is not None else arg
    return None


def _string_items(value):
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        left, right = _string_items(value.left), _string_items(value.right)
        return None if left is None or right is None else left | right
    if not isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return None
    items = set()
    for elt in value.elts:
        if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
            return None
        items.add(elt.value)
    return items


def star_exports(name, listed, bound):
    """Whether `from module import *` binds `name`: `listed` is dunder_all's answer, `bound`
    whether the module binds the name itself or through its own star imports."""
    if isinstance(listed, set):
        return name in listed
    return bound and not name.startswith("_")
