"""How many cases a task file's own get_input_groups() makes, read from its source with Python's
`ast` (never imported, never run): what `opverify-batch --list` and `--dry-run` say without
running user code.

The count is given only where the source makes it certain:
  * no binding of get_input_groups anywhere: one case (get_inputs()'s);
  * one module-level `def get_input_groups()` whose body is `return <literal list or tuple>`, or
    `return [<anything> for <target> in <ITER>]` (one `for`, no `if`), where ITER is a literal
    list or tuple, `range(<int>)`, or a module-level name bound once to a literal list or tuple
    (or to a comprehension over literals only, without `if`) and never rebound or changed (the
    convention: `CASES = [...]` and `return [get_inputs(**p) for p in CASES]`);
and never where the module binds names dynamically (star imports, globals(), exec, setattr, ...).
Anything else is counted when the task runs."""
import ast
import os
import stat

MAX_SOURCE_BYTES = 16 << 20
# Names whose use can bind or change module names out of the parser's sight.
DYNAMIC_NAMES = {"globals", "locals", "vars", "exec", "eval", "setattr", "delattr", "__import__", "importlib",
                 "__builtins__", "__dict__"}
MUTATING_METHODS = {"append", "extend", "insert", "pop", "remove", "clear", "__setitem__", "__delitem__",
                    "__iadd__", "__imul__"}


def _literal_length(node):
    """A literal list or tuple's length; a list comprehension's whose every `for` runs over such
    a literal (no `if`): the product of their lengths."""
    if isinstance(node, (ast.List, ast.Tuple)) and not any(isinstance(e, ast.Starred) for e in node.elts):
        return len(node.elts)
    if isinstance(node, ast.ListComp) and node.generators:
        product = 1
        for generator in node.generators:
            length = None if generator.ifs or generator.is_async else _literal_length(generator.iter)
            if length is None:
                return None
            product *= length
        return product
    return None


def _bindings(tree, name):
    """Every node that binds or changes `name` anywhere in the module."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and not isinstance(node.ctx, ast.Load):
            found.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            found.append(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            found += [node for alias in node.names if (alias.asname or alias.name.split(".")[0]) == name]
        elif isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            found.append(node)
        elif isinstance(node, ast.arg) and node.arg == name:
            found.append(node)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name \
                and (node.attr in MUTATING_METHODS or not isinstance(node.ctx, ast.Load)):
            found.append(node)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == name \
                and not isinstance(node.ctx, ast.Load):
            found.append(node)
    return found


def _module_list_length(tree, name):
    """The length of module-level `name = [...]` bound once and never changed, else None."""
    bindings = _bindings(tree, name)
    if len(bindings) != 1:
        return None
    for stmt in tree.body:
        value = None
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and stmt.targets[0] is bindings[0]:
            value = stmt.value
        elif isinstance(stmt, ast.AnnAssign) and stmt.target is bindings[0]:
            value = stmt.value
        if value is not None:
            return _literal_length(value)
    return None


def _iter_length(tree, node):
    length = _literal_length(node)
    if length is not None:
        return length
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" \
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], ast.Constant) \
            and type(node.args[0].value) is int and not _bindings(tree, "range"):
        return max(0, node.args[0].value)
    if isinstance(node, ast.Name):
        return _module_list_length(tree, node.id)
    return None


def _returned_length(tree, function):
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
            and isinstance(body[0].value.value, str):
        body = body[1:]  # the docstring
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    value = body[0].value
    length = _literal_length(value)
    if length is not None:
        return length
    if isinstance(value, ast.ListComp) and len(value.generators) == 1:
        generator = value.generators[0]
        if generator.ifs or generator.is_async:
            return None
        local = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        local |= {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
        if isinstance(generator.iter, ast.Name) and generator.iter.id in local:
            return None  # a local of the same name shadows the module's list
        return _iter_length(tree, generator.iter)
    return None


def count_cases(source):
    """(count, None) when the source makes the task's own case count certain, else (None, why)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as error:
        return None, f"it does not parse ({type(error).__name__}); the run reports it"
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return None, "it star-imports names"
        if (isinstance(node, ast.Name) and node.id in DYNAMIC_NAMES) or \
                (isinstance(node, ast.Attribute) and node.attr in ("__dict__", "modules")) or \
                (isinstance(node, ast.alias) and node.name.split(".")[0] in DYNAMIC_NAMES):
            return None, "it binds names dynamically"
    if _bindings(tree, "__getattr__"):
        return None, "it defines a module __getattr__"
    bindings = _bindings(tree, "get_input_groups")
    if not bindings:
        return 1, None
    if len(bindings) != 1 or not isinstance(bindings[0], ast.FunctionDef) or bindings[0] not in tree.body:
        return None, "get_input_groups is not one module-level function"
    length = _returned_length(tree, bindings[0])
    if length is None:
        return None, "get_input_groups() does not return a literal list or one built over a literal list"
    return length, None


def count_file(path):
    """count_cases of the file at `path`; (None, why) when it cannot be read."""
    try:  # without blocking: a FIFO would wait for a writer forever
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return None, "it is not a regular file"
            chunks, size = [], 0
            while size <= MAX_SOURCE_BYTES:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
            data = b"".join(chunks)
        finally:
            os.close(fd)
    except OSError as error:
        return None, f"it cannot be read ({error.strerror or error})"
    if len(data) > MAX_SOURCE_BYTES:
        return None, "it is larger than the parser reads"
    try:
        return count_cases(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        return None, "it is not UTF-8"


def count_files(paths):
    """[[count or None, why or None], ...] for each path, in order (the C++ side's call)."""
    return [list(count_file(path)) for path in paths]
