"""The static lint of a Triton implementation: `opverify lint FILE`.

A stricter drop-in for upstream's `validate_triton_impl.py FILE --json`: pure analysis with
Python's own `ast` (the file is never imported or executed), the same JSON fields plus ours.

Regression types (the lowest that applies is `regression_type`; `checks` lists every check):
  1  no @triton.jit kernel at all
  2  kernels exist, but none is launched from ModelNew.forward or anything it reaches
  3  PyTorch computes: torch.*/F.* calls, tensor compute methods, `@`, and Python's operators
     on a tensor the function made (torch.empty_like(x) + y) in forward or anything it reaches;
     nn layers anywhere; and the ways to hide compute from those names (dynamic
     lookups, exec/eval, importing the reference, aliases, lambdas, ATen operators)
  4  every launched kernel is a placeholder: it only moves data (skipped with non_compute)
  5  (ours) evasion of the measurement: side streams, threads, timer or torch monkey-patching

Reachability follows calls from ModelNew.forward (and __call__, forward hooks) into module-level
functions, methods, lambdas, autograd.Function.apply and instances of local classes, through
local, module-level, class-attribute and default-argument aliases, once per context of
constant arguments: branches a literal argument (or an omitted parameter's default) rules out
are not reached (branches.py). An instance is what its class builds, however it is handed over
(nn.Module's self-returning .eval()/.to()/.cuda(), a factory's return, torch.nn.Sequential's
members), and keeps the constants its constructor stores on it once (calls.py). Lines are the
file's own.

Names resolve as Python binds them: in a declared library, `pkg.name` is the package's
attribute (the last binding its `__init__` makes, star imports included) before the submodule
`pkg/name.py`; `from M import *` exports what M's `__all__` lists, else its names not starting
with `_`, and a later binding wins over an earlier one. A kernel under a declared library's
own decorator (an element function its generated wrapper launches) and a module the library
generates and imports at run time are launches the lint cannot see into: types 1 and 2 are
then left to the runtime evidence ("unproven" in the result), never reported as failures.
ATen operators called directly in a library (torch.ops.aten.mul.Tensor, torch._C._nn.gelu)
are type 3 unless they only read metadata, take views or allocate (names.ATEN_NON_COMPUTE).

The package, one job per module: names (the tables), symbols (scopes, refs, path helpers),
analysis (resolution) with module_checks (types 3 and 5 anywhere), reachability (types 2
and 3 from forward) and branches (the constants that decide its branches), library (the
declared library packages read as source, so kernels and functions defined there are the
file's own) with exports (Python's rules for a module's names, as pure functions),
kernel_taint (type 4), result (the JSON result), text (the summary and the command line).
"""
from .names import (ALLOWED_TENSOR_METHODS, ALLOWED_TORCH_CALLS, CHECK_TYPES, COMPUTED, CONVENTIONAL_NAMES,
                    DYNAMIC_DUNDERS, FORBIDDEN_TENSOR_METHODS, GETATTR_TORCH_METADATA, HOOK_REGISTRARS,
                    IMPORTLIB_CALLS, LOADED, NN_HOLDERS, NN_MODULE_API, NONE, PATH_RULES, SDPA, TAMPER_ROOTS,
                    TIMER_PATHS, TL_DATA_MOVEMENT, TL_INDEX, TL_RANDOM, TORCH_VALUES, TYPE_TITLES,
                    VALUE_METADATA_ATTRS, VALUE_METHODS_DATA_MOVEMENT, VIOLATION_CHECKS)
from .result import exit_code, lint_entries, lint_file, lint_source
from .symbols import Binding, ClassInfo, Ref, Scope
from .text import format_text, main

# The names the single-module lint had: the entry points, then its tables and symbol types.
__all__ = ["lint_source", "lint_file", "lint_entries", "exit_code", "format_text", "main", "CHECK_TYPES",
           "TYPE_TITLES", "VIOLATION_CHECKS", "ALLOWED_TENSOR_METHODS", "ALLOWED_TORCH_CALLS",
           "COMPUTED", "CONVENTIONAL_NAMES", "DYNAMIC_DUNDERS", "FORBIDDEN_TENSOR_METHODS",
           "GETATTR_TORCH_METADATA", "HOOK_REGISTRARS", "IMPORTLIB_CALLS", "LOADED", "NN_HOLDERS",
           "NN_MODULE_API", "NONE", "PATH_RULES", "SDPA", "TAMPER_ROOTS", "TIMER_PATHS",
           "TL_DATA_MOVEMENT", "TL_INDEX", "TL_RANDOM", "TORCH_VALUES", "VALUE_METADATA_ATTRS",
           "VALUE_METHODS_DATA_MOVEMENT", "Binding", "ClassInfo", "Ref", "Scope"]
