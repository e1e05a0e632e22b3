"""The checks that hold anywhere in the file (types 3 and 5): imports and names of the
reference, dynamic lookups and code, nn layers, fused torch kernels, side streams and
threads, patched timers or torch. Mixed into analysis._Analysis."""
import ast

from .names import (DYNAMIC_DUNDERS, FORWARD_SWAPS, GETATTR_TORCH_METADATA, HOOK_REGISTRARS, HOOK_TABLES,
                    IMPORTLIB_CALLS, TAMPER_ROOTS, TIMER_PATHS)
from .symbols import (_classify_path, _const_str, _dotted, _fold_str, _nn_layer_reason, _root, _shown,
                      _torch_compute_reason, _unparse)

class _ModuleChecks:
    # ---- module-wide checks ----------------------------------------------------------------

    def _is_chain_top(self, node):
        parent = self.parents.get(node)
        return not (isinstance(parent, ast.Attribute) and parent.value is node)

    def _is_torchish(self, refs, roots=("torch", "torch_npu", "triton")):
        return any(r.kind == "path" and _root(r.value) in roots for r in refs)

    def _reference_like(self, module):
        if self._in_declared_library(module):
            return False  # a module of the declared library is the implementation's, never the task file
        last = module.rstrip(".").split(".")[-1]
        if last == "__main__":
            return True
        return last.endswith("_torch") or (self.op is not None and last in (self.op, self.op + "_torch"))

    def _in_declared_library(self, module):
        """Whether `module` is a module of a declared library package, or a name one of its
        modules defines, found in its source (the package's own name not being the
        reference's). A module is found as the import system finds it, not as an attribute:
        `from fla.ops.utils.solve_tril import solve_tril` names the module solve_tril.py
        although the package `fla.ops.utils` binds `solve_tril` to the function."""
        if module.startswith(".") or not self.library_index.owns(module):
            return False
        top = module.split(".")[0]
        if top == "__main__" or top.endswith("_torch") or (self.op is not None and top in (self.op, self.op + "_torch")):
            return False
        if self.library_index.find(module) is not None:
            return True  # a module the import system finds in the package (`from pkg.op import op`)
        parent, _, attr = module.rpartition(".")
        if parent and self.library_index.find(parent) is not None and \
                self._module_member(parent, attr, frozenset(), 1):
            return True  # a name that module binds (`solve_tril` in solve_tril.py)
        return bool(self._library_path(module, frozenset(), 1))

    def check_module(self):
        for node in ast.walk(self.tree):
            scope = self.enclosing.get(node, self.module)
            self._check_swapped_forward(node, scope)
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                self._check_import(node)
            elif isinstance(node, (ast.Name, ast.Attribute)) and self._is_chain_top(node):
                if isinstance(node.ctx, ast.Load):
                    self._check_reference_path(node, scope)
            elif isinstance(node, ast.Call):
                self._check_call_module_wide(node, scope)
            if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
                self._check_tamper_targets(node, scope)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in (
                    "__torch_function__", "__torch_dispatch__"):
                self.report("no_aten_ops", node.lineno, f"def {node.name}",
                            "intercepts torch calls on tensors (a tensor subclass), which can fake or defer outputs")
            elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node not in self.docstrings:
                s = node.value
                if s.endswith("_torch.py") or (self.op is not None and s in (self.op + "_torch", self.op + "_torch.py")):
                    self.report("no_reference_use", node.lineno, repr(s)[:80],
                                "names the reference task file; the implementation must not load the reference")
        for module, line in self.star_imports:
            if _root(module) in ("torch", "torch_npu"):
                self.report("no_hidden_torch_compute", line, f"from {module} import *",
                            "a star import makes torch functions callable by bare names the lint cannot attribute")

    def _check_swapped_forward(self, node, scope):
        """What would run instead of the forward the lint reads: a forward (or nn.Module's call
        machinery, or the class) assigned at run time, a class defining how nn.Module calls
        forward, a class decorator of the file's own on ModelNew; and forward hooks the lint
        cannot follow (a registrar taken as a value or called unbound, the hook tables)."""
        swap = "replaces what runs for the forward the lint reads, at run time"
        if isinstance(node, ast.Attribute) and isinstance(node.ctx, (ast.Store, ast.Del)) and node.attr in FORWARD_SWAPS:
            self.report("no_dynamic_code", node.lineno, f"{_unparse(node, 60)} = ...", swap)
        elif isinstance(node, ast.Call) and len(node.args) >= 2 and _const_str(node.args[1]) in FORWARD_SWAPS and any(
                r.kind == "path" and r.value in ("builtins.setattr", "builtins.object.__setattr__")
                for r in self.resolve(node.func, scope)):
            self.report("no_dynamic_code", node.lineno, _unparse(node, 60), swap)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in FORWARD_SWAPS - {"forward", "__call__"} \
                and isinstance(self.parents.get(node), ast.ClassDef):
            self.report("no_dynamic_code", node.lineno, f"def {node.name}", swap)
        elif isinstance(node, ast.ClassDef) and node.name == "ModelNew" and node.decorator_list:
            self.report("no_dynamic_code", node.lineno, f"@{_unparse(node.decorator_list[0], 60)}",
                        "a class decorator on ModelNew may replace its forward")
        elif isinstance(node, ast.Attribute) and node.attr in HOOK_TABLES:
            self.report("no_dynamic_code", node.lineno, _unparse(node, 60), "reaches nn.Module's hook tables directly")
        elif isinstance(node, ast.Attribute) and node.attr in HOOK_REGISTRARS:
            parent = self.parents.get(node)
            if not (isinstance(parent, ast.Call) and parent.func is node and len(parent.args) == 1):
                self.report("no_dynamic_code", node.lineno, _unparse(node, 60),
                            "registers a forward hook in a form the lint does not follow (an alias, or unbound)")

    def _check_import(self, node):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
            text = "import " + ", ".join(names)
        else:
            module = "." * node.level + (node.module or "")
            text = f"from {module} import " + ", ".join(a.name for a in node.names)
            names = [module] + [f"{module}.{a.name}" if module and not module.endswith(".") else module + a.name
                                for a in node.names if a.name != "*"]
            if any(a.name == "Model" for a in node.names):
                self.report("no_reference_use", node.lineno, _unparse(node),
                            "imports Model, the reference's class name: the implementation must not use the reference")
        for name in names:
            if not name.strip("."):
                continue
            if self._reference_like(name):
                self.report("no_reference_use", node.lineno, text[:80],
                            f"imports {name}, the reference task module (or the verifier's __main__)")
                continue
            found = _classify_path(name.lstrip("."))
            if found is not None and found[0] not in ("no_timer_tampering",) or (
                    found is not None and name.split(".")[0] in ("unittest", "mock")):
                self.report(found[0], node.lineno, text[:80], f"imports {name}: {found[1]}")

    def _check_reference_path(self, node, scope):
        parent = self.parents.get(node)
        if isinstance(node, ast.Attribute) and node.attr in DYNAMIC_DUNDERS:
            if self._is_torchish(self.resolve(node.value, scope)):
                self.report("no_dynamic_lookup", node.lineno, _unparse(node),
                            f"{node.attr} on a torch/triton namespace looks attributes up by string, hiding them from the lint")
                return
        is_call = isinstance(parent, ast.Call) and parent.func is node
        for r in self.resolve(node, scope):
            if r.kind != "path":
                continue
            if r.value in IMPORTLIB_CALLS:
                if not is_call:
                    self.report("no_dynamic_lookup", node.lineno, _unparse(node),
                                f"{r.value} imports modules chosen at run time")
                continue
            found = _classify_path(r.value)
            if found is not None and not self._custom_op_functions(r.value):  # not the library's own op
                self.report(found[0], node.lineno, _shown(_unparse(node), r.value), found[1])
                return

    def _check_call_module_wide(self, call, scope):
        refs = self.resolve(call.func, scope)
        paths = {r.value for r in refs if r.kind == "path"}
        func_text = _unparse(call.func)
        if "builtins.getattr" in paths and len(call.args) >= 2:
            target = self.resolve(call.args[0], scope)
            attr = _const_str(call.args[1])
            if self._is_torchish(target):
                if attr is None:
                    self.report("no_dynamic_lookup", call.lineno, self._getattr_display(call),
                                "getattr with a computed name on a torch/triton namespace hides which function is called")
                else:
                    for r in target:
                        if r.kind == "path" and _root(r.value) in ("torch", "torch_npu"):
                            full = _dotted(r.value, attr)
                            if attr not in GETATTR_TORCH_METADATA and (
                                    _torch_compute_reason(full) or _classify_path(full) or _nn_layer_reason(full)):
                                self.report("no_dynamic_lookup", call.lineno, self._getattr_display(call),
                                            f"getattr hides {full} from the name checks")
                                break
        if paths & {"builtins.setattr", "builtins.delattr"} and call.args:
            for r in self.resolve(call.args[0], scope):
                if r.kind == "path" and _root(r.value) in TAMPER_ROOTS:
                    self.report("no_timer_tampering", call.lineno, _unparse(call),
                                f"{func_text} on {r.value} monkey-patches it; timers and the reference would see the replacement")
                    break
        if paths & {"builtins.vars", "builtins.dir"} and call.args:
            if self._is_torchish(self.resolve(call.args[0], scope)):
                self.report("no_dynamic_lookup", call.lineno, _unparse(call),
                            "lists a torch/triton namespace to look functions up by string")
        for p in paths & IMPORTLIB_CALLS:
            arg = _fold_str(call.args[0]) if call.args else None
            shown = _unparse(call)
            if arg is not None and (self._reference_like(arg.replace(".py", "").replace("/", "."))
                                    or arg.endswith("_torch.py")):
                self.report("no_reference_use", call.lineno, shown, f"{p} loads the reference task module")
            elif arg is not None and _root(arg) in ("torch", "torch_npu", "triton"):
                self.report("no_dynamic_lookup", call.lineno, shown,
                            f"{p} aliases {arg} through importlib, hiding the torch names used")
            else:
                self.report("no_dynamic_lookup", call.lineno, shown,
                            f"{p} imports a module chosen at run time; the reference cannot be ruled out")
        name_called = (call.func.id if isinstance(call.func, ast.Name)
                       else call.func.attr if isinstance(call.func, ast.Attribute) else None)
        if name_called == "Model":
            local = any(r.kind == "class" for r in refs)
            self.report("no_reference_use", call.lineno, func_text,
                        "instantiates a class named Model, the reference's name" + (
                            " (a copy of the reference in this file)" if local else ""))
        if isinstance(call.func, ast.Attribute) and call.func.attr in HOOK_REGISTRARS:
            pass  # hook functions become entries of the reachability walk (see entries())
        for p in paths:
            reason = _nn_layer_reason(p)
            if reason is not None:
                self.report("no_forbidden_torch_ops", call.lineno, _shown(func_text, p), reason)

    def _check_tamper_targets(self, node, scope):
        targets = list(node.targets) if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
        flat = []
        while targets:
            t = targets.pop()
            if isinstance(t, (ast.Tuple, ast.List)):
                targets.extend(t.elts)
            else:
                flat.append(t)
        for t in flat:
            base = None
            if isinstance(t, ast.Attribute):
                base = t
            elif isinstance(t, ast.Subscript):
                base = t.value
            if base is None:
                continue
            for r in self.resolve(base, scope):
                if r.kind == "path" and _root(r.value) in TAMPER_ROOTS and r.value not in ("builtins.object",):
                    path = r.value
                    if path.startswith(TIMER_PATHS) or _root(path) in ("time", "timeit"):
                        reason = f"assigning {path} tampers with the timers the benchmark reads"
                    else:
                        reason = f"assigning {path} monkey-patches it; the reference and the timers would see the replacement"
                    self.report("no_timer_tampering", node.lineno, _unparse(t), reason)
                    break
