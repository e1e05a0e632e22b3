"""The declared library packages (`library` in a manifest, `--library`), read as source.

A path such as `pkg.sub.f` that an implementation reaches (`from pkg.sub import f`,
`import pkg.sub as m; m.f(...)`, `pkg.Cls().method(...)`) is looked up in the package's own
files: found with importlib's PathFinder (the package is never imported: only its `.py`
files are parsed with `ast`), visited into the same analysis as the implementation (each
module with its own module scope, relative imports made absolute), so functions, classes,
autograd.Function subclasses and @triton.jit kernels defined there resolve as the file's own.
Kept bounded: at most MAX_MODULES modules of at most MAX_BYTES each. Mixed into
analysis._Analysis."""
import ast
import importlib.machinery
import os
import sys

from .exports import conditional_spans, dunder_all, last_binders, star_exports
from .symbols import Ref, Scope, _is_main_guard

MAX_MODULES = 1024  # a library read through a framework's imports (vLLM: 256 were not enough)
MAX_BYTES = 2 * 1024 * 1024


class LibraryIndex:
    """Where the declared packages' modules are on disk: name -> (source file or None, package folders or None)."""

    def __init__(self, library, python_path):
        self.library = tuple(library)
        self.search = [os.path.abspath(os.fspath(p)) for p in python_path] + [p for p in sys.path if p]
        self._found = {}

    def owns(self, path):
        return path.split(".")[0] in self.library

    def find(self, name):
        """(origin .py file or None, submodule folders or None) of module `name`, or None."""
        if name in self._found:
            return self._found[name]
        found = None
        parent, _, _ = name.rpartition(".")
        if not parent:
            search = self.search
        else:
            up = self.find(parent)
            search = up[1] if up is not None else None
        if search:
            last = name.rpartition(".")[2]
            portions = [os.path.join(f, last) for f in search if os.path.isdir(os.path.join(f, last))]
            try:
                spec = importlib.machinery.PathFinder.find_spec(name, list(search))
            except KeyError:  # a folder without __init__.py in a package: Python's portions need the parent
                spec = None   # imported; a namespace package's portions are its folders of that name
                found = (None, portions) if portions else None
            except (ImportError, ValueError, OSError):
                spec = None
            if spec is not None:
                origin = spec.origin if spec.origin and spec.origin.endswith(".py") else None
                folders = (portions if spec.origin in (None, "namespace")
                           else list(spec.submodule_search_locations or [])) or None
                if origin is not None or folders is not None:
                    found = (origin, folders)
        self._found[name] = found
        return found


class _Library:
    def _init_library(self, library, python_path):
        self.library_index = LibraryIndex(library, python_path)
        self.library_scopes = {}   # module name -> its module Scope (None: could not be read)
        self.library_stars = {}    # module name -> [(absolute module it star-imports, line)]
        self.library_notes = []    # modules that could not be read, and why
        self.module_facts = {}     # module name -> (its __all__, its conditional spans): exports.py
        self.file_of = {}          # def / lambda / class node of a library module -> its file
        self._library_bytes = 0
        self._visiting = None      # (module name, its package) while a library module is visited
        self._scan_file = None     # the library file whose function is being scanned, for reports

    def _absolute_import(self, node):
        """An ImportFrom's module made absolute inside a library module (relative imports)."""
        if not node.level or self._visiting is None:
            return None
        parts = self._visiting[1].split(".")
        base = parts[:len(parts) - (node.level - 1)] if node.level > 1 else parts
        return ".".join(base + ([node.module] if node.module else []))

    def _library_module(self, name):
        """The module Scope of library module `name`, parsed and visited on first use; None."""
        if name in self.library_scopes:
            return self.library_scopes[name]
        self.library_scopes[name] = None
        found = self.library_index.find(name)
        if found is None:
            return None
        origin, folders = found
        scope = Scope("module", None, None)
        self.scope_module[id(scope)] = name
        if origin is None:  # a namespace package: only submodules
            self.library_scopes[name] = scope
            return scope
        if len(self.library_scopes) > MAX_MODULES:
            self.library_notes.append(f"{name}: not read (more than {MAX_MODULES} library modules)")
            return None
        try:
            with open(origin, "rb") as f:
                data = f.read(MAX_BYTES + 1)
            if len(data) > MAX_BYTES:
                self.library_notes.append(f"{origin}: not read (over {MAX_BYTES} bytes)")
                return None
            tree = ast.parse(data.decode("utf-8-sig"), filename=origin)
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError, RecursionError) as e:
            self.library_notes.append(f"{origin}: not read ({type(e).__name__}: {e})")
            return None
        tree.body = [stmt for stmt in tree.body if not _is_main_guard(stmt)]
        scope.node = tree
        package = name if folders is not None else name.rpartition(".")[0]
        outer, self._visiting = self._visiting, (name, package)
        steps = self._steps
        try:
            for stmt in tree.body:
                self._visit(stmt, scope)
        finally:
            self._visiting = outer
        for parent in ast.walk(tree):
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                self.file_of[parent] = origin
            for child in ast.iter_child_nodes(parent):
                self.parents[child] = parent
            body = getattr(parent, "body", None)
            if isinstance(body, list):
                self.docstrings.update(s.value for s in body if isinstance(s, ast.Expr)
                                       and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))
        self.library_scopes[name] = scope
        self._find_kernels(tree)
        self._steps = steps  # a nested load must not reset the caller's resolution budget
        return scope

    def _into_library(self, refs, seen, depth):
        """`refs` with each path into a declared package replaced by what it names there."""
        if not self.library_index.library or not any(r.kind == "path" for r in refs):
            return refs
        out = []
        for r in refs:
            found = self._library_path(r.value, seen, depth) if r.kind == "path" and \
                self.library_index.owns(r.value) else None
            out.extend([f.routed(r.via, r.same_call) if r.via and f.kind in ("path", "func") else f for f in found]
                       if found else [r])
        return out

    def _library_path(self, path, seen, depth):
        """What the dotted `path` (inside a declared package) names, attribute by attribute as
        Python looks it up: `pkg.name` is the package's attribute before its submodule (see
        _module_member); None when the source does not say."""
        if depth > 24:
            return None
        parent, _, attr = path.rpartition(".")
        if not parent:
            return [Ref("path", path)] if self.library_index.find(path) is not None else None
        bases = self._library_path(parent, seen, depth + 1)
        if not bases:
            return None
        out = []
        for base in bases:
            if base.kind == "path" and self._is_library_module(base.value):
                out.extend(self._module_member(base.value, attr, seen, depth) or [])
                continue
            member = self._member(base, attr, seen, depth)
            out.extend(self._into_library(member, seen, depth + 1) if base.kind == "path" else member)
        return out or None

    def _is_library_module(self, name):
        return self.library_index.owns(name) and self.library_index.find(name) is not None

    def _module_member(self, module, attr, seen, depth):
        """module.attr once the module has run: its own binding of `attr` or a star import's,
        the last one winning (exports.py); else the submodule `module.attr`; else None."""
        found = self._module_name(module, attr, seen, depth)
        if found is not None:
            return found
        if self.library_index.find(f"{module}.{attr}") is not None:
            return [Ref("path", f"{module}.{attr}")]
        return None

    def _module_name(self, module, attr, seen, depth, guess_stars=False):
        """What library module `module` binds `attr` to (itself or by star import), or None.
        guess_stars: a name bound nowhere may come from a star import of a module outside the
        declared packages (not read): the first such module's attribute."""
        scope = self._library_module(module)
        if scope is None or depth > 24:
            return None
        key = (attr, id(scope))
        # `k = triton.heuristics(...)(k)`: the k inside is the binding before that line
        limit = min((k[2] for k in seen if len(k) == 3 and k[:2] == key), default=None)
        if key in seen and limit is None:
            return []
        seen = seen | {key}
        stars = self.library_stars.get(module, [])
        events = [(b.line, b) for b in scope.bindings.get(attr, []) if not self._imports_itself(b, module, attr)]
        events += [(line, star) for star, line in stars
                   if self.library_index.owns(star) and self._exports(star, attr, seen, depth + 1)]
        events = [(line, b) for line, b in events if limit is None or line < limit]
        if not events:
            outside = [star for star, _ in stars if not self.library_index.owns(star)]
            return [Ref("path", f"{outside[0]}.{attr}")] if guess_stars and outside else None
        out = []
        for binder in last_binders(events, self._facts(module, scope)[1]):
            if isinstance(binder, str):  # a star import
                out.extend(self._module_member(binder, attr, seen, depth + 1) or [])
            else:
                out.extend(self._binding_refs(attr, binder, scope, seen | {key + (binder.line,)}, depth + 1))
        return self._into_library(out, seen, depth + 1)

    @staticmethod
    def _imports_itself(binding, module, attr):
        """`from . import sub` in the package's own __init__: the submodule, not a binding to follow."""
        return binding.kind == "from" and binding.value == (module, attr)

    def _exports(self, module, attr, seen, depth):
        """Whether `from module import *` binds `attr` (exports.star_exports)."""
        scope = self._library_module(module)
        if scope is None or depth > 24 or ("*", module) in seen:
            return False
        listed = self._facts(module, scope)[0]
        if isinstance(listed, set):
            return attr in listed
        bound = attr in scope.bindings or any(self.library_index.owns(star) and
                                              self._exports(star, attr, seen | {("*", module)}, depth + 1)
                                              for star, _ in self.library_stars.get(module, []))
        return star_exports(attr, listed, bound)

    def _facts(self, module, scope):
        """(dunder_all, conditional_spans) of a library module, computed once."""
        if module not in self.module_facts:
            self.module_facts[module] = (dunder_all(scope.node), conditional_spans(scope.node))
        return self.module_facts[module]

    def _from_import(self, module, attr, seen, depth):
        """`from module import attr` in library or implementation code: the module found by the
        import system, then its attribute (or submodule)."""
        if self._is_library_module(module):
            found = self._module_member(module, attr, seen, depth)
            if found is not None:
                return found
        return [Ref("path", f"{module}.{attr}")]

    def _star_import_refs(self, stars, name, seen, depth):
        """`name` in a module that binds it only through star imports [(module, line, via)]: the
        last declared-library module exporting it; None when no library module does."""
        for module, _, via in reversed(stars):
            if self._is_library_module(module) and self._exports(module, name, seen, depth):
                return [r.routed(via, same_call=True) for r in self._module_member(module, name, seen, depth) or []]
        return None

    def library_entry(self, text):
        """The function nodes of an entry point "module:attr.path" in a declared package."""
        module, _, attr = text.partition(":")
        if not self.library_index.owns(module):
            return None
        first, _, rest = attr.partition(".")
        refs = self._from_import(module, first, frozenset(), 1) if first else []
        for name in rest.split(".") if rest else []:
            refs = [m for r in refs for m in self._into_library(self._member(r, name, frozenset(), 1), frozenset(), 1)]
        nodes = []
        for r in refs:
            if r.kind == "func":
                nodes.append(r.value)
            elif r.kind in ("class", "instance"):
                for name in ("__init__", "__enter__", "__exit__", "__call__"):
                    nodes += [m.value for m in self._class_member(r.value, name, frozenset(), 0, instance=False)
                              or [] if m.kind == "func"]
        return nodes
