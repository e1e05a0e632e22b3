"""The lint's result: the analysis run over a source or a file and turned into upstream's
JSON fields and ours (checks, regression types, suggestion), and the exit code."""
import ast
import errno
import os
import stat

from ..allowances import torch_findings
from .analysis import _Analysis
from .registry import override_names
from .kernel_taint import _KernelTaint
from .names import CHECK_TYPES, COMPUTED, LOADED, VIOLATION_CHECKS
from .symbols import _is_main_guard


def _suggestion(rtype, result):
    checks = result["checks"]
    if rtype == 1:
        return ("Write the operator as at least one @triton.jit kernel that loads, computes and stores "
                "with tl.*, and launch it from ModelNew.forward().")
    if rtype == 2:
        names = ", ".join(checks["triton_kernel_exists"]["kernels"])
        return (f"Launch a @triton.jit kernel as kernel[grid](...) from ModelNew.forward() or a helper it "
                f"calls; the defined kernels ({names}) are never launched.")
    if rtype == 3:
        first = _first_violation(result, 3)
        where = f" (first: line {first['line']}, {first['call']})" if first else ""
        return (f"Move the PyTorch computation{where} into @triton.jit kernels: forward() and the code it "
                "calls may only allocate outputs (torch.empty*), take views (.view/.reshape/.contiguous), "
                "read shapes and launch kernels, with no dynamic lookups, exec/eval or reference imports.")
    if rtype == 4:
        names = ", ".join(checks["no_placeholder_kernels"]["placeholders"])
        return (f"The launched kernels ({names}) only move data with tl.load/tl.store; do the operator's "
                "arithmetic inside the kernel, or pass --non-compute if the operator is pure data movement.")
    if rtype == 5:
        first = _first_violation(result, 5)
        where = f" (first: line {first['line']}, {first['call']})" if first else ""
        return (f"Remove the side streams, threads or patched timers/torch{where}: launch the kernels on the "
                "current stream from the calling thread and leave timers and torch untouched.")
    return ""


def _first_violation(result, rtype):
    found = [v for name, check in result["checks"].items()
             if CHECK_TYPES.get(name) == rtype and not check["passed"] for v in check.get("violations", [])]
    return min(found, key=lambda v: v["line"]) if found else None


def _empty_result(filename, non_compute):
    return {"valid": False, "regression_type": None, "regression_types": [], "checks": {},
            "suggestion": "", "file": filename, "filepath": filename, "non_compute": bool(non_compute)}


def lint_source(source, filename="<string>", non_compute=False, library=(), python_path=()):
    """Lint the implementation `source` (named `filename`). Never imports or runs it.
    `library`: packages whose kernels count as its own, their sources found first in
    `python_path`, then on sys.path (read, never imported).

    Returns the JSON-ready dict: valid, regression_type (lowest type found, or None),
    regression_types (every type found), checks, suggestion, file (and filepath, upstream's
    name), non_compute; on a syntax error also "error" ("FILE:LINE: ...") and "error_line"."""
    result = _empty_result(filename, non_compute)
    try:
        tree = ast.parse(source, filename=filename)
    except SyntaxError as e:
        line = e.lineno or 0
        result["error"] = f"{filename}:{line}: SyntaxError: {e.msg}"
        result["error_line"] = line
        result["suggestion"] = f"Fix the syntax error at {filename}:{line}; the lint could not parse the file."
        return result
    except (ValueError, RecursionError, MemoryError) as e:
        result["error"] = f"{filename}:0: cannot parse: {e}"
        result["error_line"] = 0
        result["suggestion"] = f"Make {filename} a parseable Python source file."
        return result
    tree.body = [stmt for stmt in tree.body if not _is_main_guard(stmt)]  # never runs on import
    try:
        return _analyse(tree, result, filename, non_compute, library, python_path)
    except (RecursionError, MemoryError) as e:  # absurdly deep or large sources
        reason = f"too complex to analyse ({type(e).__name__})"
    except Exception as e:  # noqa: BLE001 - a lint bug must fail the file, never pass it
        reason = f"internal lint error: {type(e).__name__}: {e}"
    result = _empty_result(filename, non_compute)
    result["error"] = f"{filename}:0: {reason}"
    result["error_line"] = 0
    result["suggestion"] = "The lint could not analyse this file; simplify it or report the lint error."
    return result


def _kernel_check(a, checks):
    """Type 1 over the file's kernels and those of the library modules it reached."""
    kernels = sorted(a.kernel_nodes, key=lambda n: (a.file_of.get(n, ""), n.lineno))
    checks["triton_kernel_exists"] = {
        "passed": bool(kernels), "kernels": [k.name for k in kernels],
        "lines": {k.name: k.lineno for k in kernels if k not in a.file_of}}
    library_kernels = {k.name: f"{a.file_of[k]}:{k.lineno}" for k in kernels if k in a.file_of}
    if library_kernels:
        checks["triton_kernel_exists"]["library_kernels"] = library_kernels
    if not kernels:
        checks["triton_kernel_exists"]["error"] = "no function decorated with @triton.jit (or wrapped by triton.jit)" \
            + (f" in the file or the library it reaches ({', '.join(a.library_index.library)})"
               if a.library_index.library else "")
    return kernels


def _launched_check(a, checks, where):
    launched = sorted(a.launches, key=lambda n: (a.file_of.get(n, ""), n.lineno))
    called = {"passed": bool(launched), "called": [k.name for k in launched]}
    if not launched:
        called["error"] = f"no kernel is launched (kernel[grid](...) or kernel.run(...)) from {where}"
    checks["kernel_called_from_forward"] = called
    return launched


def _library_facts(a, result):
    if a.library_index.library:
        missing = [f"{name}: no such package or module in python_path or sys.path"
                   for name in a.library_index.library if a.library_index.find(name) is None]
        result["library"] = {"packages": list(a.library_index.library),
                             "modules_read": sorted(n for n, sc in a.library_scopes.items() if sc is not None),
                             "notes": missing + a.library_notes}


def _analyse(tree, result, filename, non_compute, library=(), python_path=()):
    a = _Analysis(tree, filename, non_compute, library, python_path)
    a.check_module()
    checks = result["checks"]
    info = a.model_class()
    launched = []
    if info is None or not a.entries(info):
        checks["kernel_called_from_forward"] = {"passed": False, "called": [],
                                                "error": "no class ModelNew with a forward() method"}
    else:
        a.walk_reachable(info)
        launched = _launched_check(a, checks, "ModelNew.forward() or anything it calls")
    kernels = _kernel_check(a, checks)
    _library_facts(a, result)
    return _finish(a, result, kernels, launched, non_compute)


def lint_entries(entries, non_compute=False, library=(), python_path=(), overrides=None):
    """The lint of a dispatch-override operator: there is no implementation file of the
    user's, so the walk starts at the enable callables ("module:callable") in the declared
    library and lints what they reach (the functions they register, the kernels those launch).
    torch.library is how an override registers: allowed there. What the walk cannot show
    statically (registrations through tables, compiled modules) leaves types 1 and 2 to the
    runtime evidence: they are reported under "unproven", not as failures. `overrides`, the torch
    callable the override replaces, limits a registration table to the operator's own rows."""
    shown = ", ".join(entries)
    try:
        return _analyse_entries(entries, shown, non_compute, library, python_path, overrides)
    except (RecursionError, MemoryError) as e:
        reason = f"too complex to analyse ({type(e).__name__})"
    except Exception as e:  # noqa: BLE001 - a lint bug must fail the operator, never pass it
        reason = f"internal lint error: {type(e).__name__}: {e}"
    result = _empty_result(f"<override: {shown}>", non_compute)
    result["error"] = f"<override: {shown}>:0: {reason}"
    result["error_line"] = 0
    return result


def _analyse_entries(entries, shown, non_compute, library, python_path, overrides):
    result = _empty_result(f"<override: {shown}>", non_compute)
    a = _Analysis(ast.parse(""), result["file"], non_compute, library, python_path)
    a.allowed_paths = ("torch.library",)
    a.override_names = override_names(overrides)
    nodes, unresolved = [], []
    for entry in entries:
        found = a.library_entry(entry)
        nodes += found or []
        if not found:
            unresolved.append(entry)
    a.walk_entries(nodes)
    checks = result["checks"]
    launched = _launched_check(a, checks, "the enable callables (" + shown + ") or anything they reach")
    kernels = _kernel_check(a, checks)
    _library_facts(a, result)
    result["override"] = {
        "entries": list(entries), "unresolved": unresolved, "overrides": overrides,
        "note": "a dispatch-override operator has no implementation file of the user's: the lint follows the "
                "enable callables into the declared library; the runtime evidence must show its kernels running"}
    result = _finish(a, result, kernels, launched, non_compute, override=True)
    return result


def _finish(a, result, kernels, launched, non_compute, override=False):
    checks = result["checks"]
    for name in VIOLATION_CHECKS:
        violations = sorted(a.violations[name], key=lambda v: (v["line"], v["call"]))
        checks[name] = {"passed": not violations, "violations": violations}

    placeholders = []
    through_library = sorted(a.unproven_kernels - set(launched), key=lambda n: (a.file_of.get(n, ""), n.lineno))
    launched = list(launched) + through_library  # type 4 judges the decorator-made launches too
    if non_compute:
        checks["no_placeholder_kernels"] = {
            "passed": True, "placeholders": [], "skipped": "non-compute operator: kernels may only move data"}
    else:
        taint = _KernelTaint(a)
        for k in launched:
            if not _computes(a, taint, k):
                placeholders.append(k)
        all_placeholders = bool(launched) and len(placeholders) == len(launched)
        checks["no_placeholder_kernels"] = {
            "passed": not all_placeholders, "placeholders": [k.name for k in placeholders],
            "violations": [dict({"line": k.lineno, "call": k.name,
                                 "reason": "placeholder kernel: it only loads and stores (no arithmetic on the data "
                                           "it loads), so the computation happens elsewhere"},
                                **({"file": a.file_of[k]} if k in a.file_of else {})) for k in placeholders]}

    # Order as upstream first, then ours.
    order = ["triton_kernel_exists", "kernel_called_from_forward", "no_forbidden_torch_ops",
             "no_placeholder_kernels"] + [n for n in VIOLATION_CHECKS if n != "no_forbidden_torch_ops"]
    result["checks"] = {name: checks[name] for name in order}
    for name, check in result["checks"].items():
        check["regression_type"] = CHECK_TYPES[name]
    types = sorted({CHECK_TYPES[name] for name, check in result["checks"].items() if not check["passed"]})
    if kernels and 1 in types:
        types.remove(1)
    if not kernels and 2 in types:
        types.remove(2)  # type 2 needs kernels to exist
        types = sorted(set(types) | {1})
    types = _defer_unproven(a, result, types, override)
    result["regression_types"] = types
    result["regression_type"] = types[0] if types else None
    result["valid"] = not types
    result["torch_ops"] = torch_findings(result)  # type 3's torch operators, for declared exceptions
    result["suggestion"] = " ".join(_suggestion(t, result) for t in types) if types else \
        "No regression found: the operator's computation is in launched Triton kernels."
    return result


def _computes(a, taint, kernel):
    """Whether a launched kernel computes: stores computed data; a kernel under a library's
    decorator (an element function whose generated wrapper stores what it returns, its
    parameters being loaded values) also when it returns computed data."""
    if kernel not in a.unproven_kernels:
        return taint.summary(kernel)[1]
    params = len(a.scope_of[kernel].param_order) if kernel in a.scope_of else 0
    ret, computes = taint.summary(kernel, (LOADED,) * params)
    return computes or ret == COMPUTED


def _defer_unproven(a, result, types, override):
    """Types 1 and 2 that only the runtime evidence can decide, taken out of `types`: for an
    override every one (its registrations are not followed statically); otherwise when the
    walk reached launches through the declared library's own machinery (a decorator's
    generated wrapper, a generated module) that it cannot see into."""
    deferred = []
    if override:
        deferred = [t for t in types if t in (1, 2)]
        result["override"]["unproven"] = deferred
    elif a.unproven:
        generated = any("kernel" not in u for u in a.unproven)
        deferred = [t for t in types if t == 2 or t == 1 and generated]
    for t in deferred:
        name = "triton_kernel_exists" if t == 1 else "kernel_called_from_forward"
        result["checks"][name]["unproven"] = "left to the runtime evidence (see unproven)"
    if a.unproven:
        result["unproven"] = {
            "types": deferred, "launches": a.unproven[:MAX_UNPROVEN_SHOWN], "count": len(a.unproven),
            "note": "launches through the declared library's own machinery (a decorator's generated wrapper, a module "
                    "it generates and imports): the lint cannot see the kernels launched there, the runtime evidence "
                    "must show the library's kernels running"}
    return [t for t in types if t not in deferred]


MAX_UNPROVEN_SHOWN = 8
MAX_SOURCE_BYTES = 16 << 20  # a larger implementation file is refused, not parsed


def _read_regular_file(path):
    """The file's bytes; OSError for anything but a regular file of at most
    MAX_SOURCE_BYTES. Opened without blocking and checked on the descriptor:
    a FIFO would wait for a writer forever, /dev/zero never ends."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, device or folder)")
        if info.st_size > MAX_SOURCE_BYTES:
            raise OSError(errno.EFBIG, f"{info.st_size} bytes, over the {MAX_SOURCE_BYTES} the lint reads")
        chunks, total = [], 0
        while total <= MAX_SOURCE_BYTES:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
            total += len(chunk)
        raise OSError(errno.EFBIG, f"more than the {MAX_SOURCE_BYTES} bytes the lint reads")
    finally:
        os.close(fd)


def lint_file(path, non_compute=False, library=(), python_path=()):
    """lint_source on the file at `path`; an unreadable file gives a result with "error"."""
    path = os.fspath(path)
    try:
        data = _read_regular_file(path)
        source = data.decode("utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        result = _empty_result(path, non_compute)
        reason = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        result["error"] = f"{path}:0: cannot read: {reason}"
        result["error_line"] = 0
        result["suggestion"] = f"Give the lint a readable UTF-8 Python file ({path})."
        return result
    return lint_source(source, path, non_compute, library, python_path)


def exit_code(result):
    """0 valid, 1 a regression found, 2 the file could not be read or parsed."""
    if "error" in result:
        return 2
    return 0 if result["valid"] else 1
