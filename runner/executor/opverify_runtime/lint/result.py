"""The lint's result: the analysis run over a source or a file and turned into upstream's
JSON fields and ours (checks, regression types, suggestion), and the exit code."""
import ast
import errno
import os
import stat

from .analysis import _Analysis
from .kernel_taint import _KernelTaint
from .names import CHECK_TYPES, VIOLATION_CHECKS
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


def lint_source(source, filename="<string>", non_compute=False):
    """Lint the implementation `source` (named `filename`). Never imports or runs it.

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
        return _analyse(tree, result, filename, non_compute)
    except (RecursionError, MemoryError) as e:  # absurdly deep or large sources
        reason = f"too complex to analyse ({type(e).__name__})"
    except Exception as e:  # noqa: BLE001 - a lint bug must fail the file, never pass it
        reason = f"internal lint error: {type(e).__name__}: {e}"
    result = _empty_result(filename, non_compute)
    result["error"] = f"{filename}:0: {reason}"
    result["error_line"] = 0
    result["suggestion"] = "The lint could not analyse this file; simplify it or report the lint error."
    return result


def _analyse(tree, result, filename, non_compute):
    a = _Analysis(tree, filename, non_compute)
    a.check_module()
    kernels = sorted(a.kernel_nodes, key=lambda n: n.lineno)
    checks = result["checks"]
    checks["triton_kernel_exists"] = {
        "passed": bool(kernels), "kernels": [k.name for k in kernels],
        "lines": {k.name: k.lineno for k in kernels}}
    if not kernels:
        checks["triton_kernel_exists"]["error"] = "no function decorated with @triton.jit (or wrapped by triton.jit)"

    info = a.model_class()
    launched = []
    called = {"passed": False, "called": []}
    if info is None or not a.entries(info):
        called["error"] = "no class ModelNew with a forward() method"
    else:
        a.walk_reachable(info)
        launched = sorted(a.launches, key=lambda n: n.lineno)
        called["called"] = [k.name for k in launched]
        called["passed"] = bool(launched)
        if not launched:
            called["error"] = ("no kernel is launched (kernel[grid](...) or kernel.run(...)) from "
                               "ModelNew.forward() or anything it calls")
    checks["kernel_called_from_forward"] = called

    for name in VIOLATION_CHECKS:
        violations = sorted(a.violations[name], key=lambda v: (v["line"], v["call"]))
        checks[name] = {"passed": not violations, "violations": violations}

    placeholders = []
    if non_compute:
        checks["no_placeholder_kernels"] = {
            "passed": True, "placeholders": [], "skipped": "non-compute operator: kernels may only move data"}
    else:
        taint = _KernelTaint(a)
        for k in launched:
            _, computes = taint.summary(k)
            if not computes:
                placeholders.append(k)
        all_placeholders = bool(launched) and len(placeholders) == len(launched)
        checks["no_placeholder_kernels"] = {
            "passed": not all_placeholders, "placeholders": [k.name for k in placeholders],
            "violations": [{"line": k.lineno, "call": k.name,
                            "reason": "placeholder kernel: it only loads and stores (no arithmetic on the data "
                                      "it loads), so the computation happens elsewhere"} for k in placeholders]}

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
    result["regression_types"] = types
    result["regression_type"] = types[0] if types else None
    result["valid"] = not types
    result["suggestion"] = " ".join(_suggestion(t, result) for t in types) if types else \
        "No regression found: the operator's computation is in launched Triton kernels."
    return result


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


def lint_file(path, non_compute=False):
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
    return lint_source(source, path, non_compute)


def exit_code(result):
    """0 valid, 1 a regression found, 2 the file could not be read or parsed."""
    if "error" in result:
        return 2
    return 0 if result["valid"] else 1
