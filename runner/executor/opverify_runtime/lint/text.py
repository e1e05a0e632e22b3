"""The human summary of a result, and the command line (`python -m opverify_runtime.lint`,
the same as `opverify lint`)."""
import json
import sys

from .names import TYPE_TITLES
from .result import exit_code, lint_file


def _check_lines(result):
    """(file, line, call, reason) for every failure, for the text summary."""
    out = []
    f = result["file"]
    checks = result["checks"]
    if not checks["triton_kernel_exists"]["passed"]:
        out.append((f, 1, "@triton.jit", checks["triton_kernel_exists"].get("error", "no kernel")))
    elif not checks["kernel_called_from_forward"]["passed"]:
        lines = checks["triton_kernel_exists"]["lines"]
        elsewhere = checks["triton_kernel_exists"].get("library_kernels", {})
        for name in checks["triton_kernel_exists"]["kernels"]:
            where = elsewhere[name].rsplit(":", 1) if name in elsewhere else (f, lines.get(name, 0))
            out.append((where[0], int(where[1]), name, "kernel is never launched from ModelNew.forward()"))
    for name, check in checks.items():
        if name in ("triton_kernel_exists", "kernel_called_from_forward"):
            continue
        if not check["passed"]:
            out.extend((v.get("file", f), v["line"], v["call"], v["reason"]) for v in check.get("violations", []))
    return sorted(out, key=lambda x: (x[0] != f, x[0], x[1]))


def _unproven_lines(result):
    """The launches the lint left to the runtime evidence, the first few."""
    unproven = result.get("unproven")
    if not unproven:
        return ""
    lines = [f"unproven: {unproven['count']} launch(es) through the declared library's own machinery; "
             "the runtime evidence must show its kernels running"]
    lines += [f"{u['file']}:{u['line']}: {u['call']} \u2014 {u['how']}" for u in unproven["launches"][:3]]
    return "\n".join(lines) + "\n"


def format_text(result):
    """The human summary: valid/invalid, the type, each violation as `file:line: call — reason`."""
    f = result["file"]
    if "error" in result:
        return f"{f}: ERROR: {result['error']}\n"
    kernels = result["checks"]["triton_kernel_exists"]["kernels"]
    called = result["checks"]["kernel_called_from_forward"]["called"]
    if result["valid"]:
        mode = " (non-compute)" if result["non_compute"] else ""
        launched = ", ".join(called) or "none the lint can see"
        return f"{f}: valid{mode}: kernels {', '.join(kernels)}; launched from forward: {launched}\n" + \
            _unproven_lines(result)
    types = result["regression_types"]
    head = f"{f}: INVALID: regression type {types[0]} ({TYPE_TITLES[types[0]]})"
    if len(types) > 1:
        head += "; also type " + ", ".join(str(t) for t in types[1:])
    lines = [head]
    lines += [f"{where}:{line}: {call} \u2014 {reason}" for where, line, call, reason in _check_lines(result)]
    lines += [f"library: {note}" for note in result.get("library", {}).get("notes", [])]
    lines += [line for line in _unproven_lines(result).splitlines()]
    lines.append(f"suggestion: {result['suggestion']}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """python -m opverify_runtime.lint FILE [--json] [--non-compute] (same as `opverify lint`)."""
    import argparse
    parser = argparse.ArgumentParser(prog="opverify lint", description=sys.modules[__package__].__doc__.split("\n")[0])
    parser.add_argument("file")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--non-compute", action="store_true")
    parser.add_argument("--library", action="append", default=[])
    parser.add_argument("--python-path", action="append", default=[])
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    result = lint_file(args.file, non_compute=args.non_compute, library=args.library, python_path=args.python_path)
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(format_text(result))
    return exit_code(result)
