"""The human summary of a result, and the command line (`python -m opverify_runtime.lint`,
the same as `opverify lint`)."""
import json
import sys

from .names import TYPE_TITLES
from .result import exit_code, lint_file


def _check_lines(result):
    """(line, call, reason) for every failure, for the text summary."""
    out = []
    checks = result["checks"]
    if not checks["triton_kernel_exists"]["passed"]:
        out.append((1, "@triton.jit", checks["triton_kernel_exists"].get("error", "no kernel")))
    elif not checks["kernel_called_from_forward"]["passed"]:
        lines = checks["triton_kernel_exists"]["lines"]
        for name in checks["triton_kernel_exists"]["kernels"]:
            out.append((lines[name], name, "kernel is never launched from ModelNew.forward()"))
    for name, check in checks.items():
        if name in ("triton_kernel_exists", "kernel_called_from_forward"):
            continue
        if not check["passed"]:
            out.extend((v["line"], v["call"], v["reason"]) for v in check.get("violations", []))
    return sorted(out, key=lambda x: x[0])


def format_text(result):
    """The human summary: valid/invalid, the type, each violation as `file:line: call — reason`."""
    f = result["file"]
    if "error" in result:
        return f"{f}: ERROR: {result['error']}\n"
    kernels = result["checks"]["triton_kernel_exists"]["kernels"]
    called = result["checks"]["kernel_called_from_forward"]["called"]
    if result["valid"]:
        mode = " (non-compute)" if result["non_compute"] else ""
        return (f"{f}: valid{mode}: kernels {', '.join(kernels)}; launched from forward: "
                f"{', '.join(called)}\n")
    types = result["regression_types"]
    head = f"{f}: INVALID: regression type {types[0]} ({TYPE_TITLES[types[0]]})"
    if len(types) > 1:
        head += "; also type " + ", ".join(str(t) for t in types[1:])
    lines = [head]
    lines += [f"{f}:{line}: {call} \u2014 {reason}" for line, call, reason in _check_lines(result)]
    lines.append(f"suggestion: {result['suggestion']}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    """python -m opverify_runtime.lint FILE [--json] [--non-compute] (same as `opverify lint`)."""
    import argparse
    parser = argparse.ArgumentParser(prog="opverify lint", description=sys.modules[__package__].__doc__.split("\n")[0])
    parser.add_argument("file")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--non-compute", action="store_true")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    result = lint_file(args.file, non_compute=args.non_compute)
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(format_text(result))
    return exit_code(result)
