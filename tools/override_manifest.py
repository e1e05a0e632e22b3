#!/usr/bin/env python3
"""Writes a job manifest of dispatch-override operators (docs/MANIFEST.md, "Dispatch-override
operators") from a short list: one line per ATen op.

    tools/override_manifest.py OPS.txt --library mylib --enable mylib:enabled \\
        [--python-path DIR] [--name JOB] [--defaults '{"seeds": 3}'] [--opinfo] [-o jobs/mylib.json]
    tools/override_manifest.py --check-opinfo

A line of OPS.txt is `name | op | args | sweep [| tags]` (`#` starts a comment, blank lines are
skipped; tags, separated by spaces, go to the entry's "tags", e.g. a known verdict's attribution;
the tag non-compute also sets the entry's "non_compute": data movement, judged bitwise):

    softmax  | torch.softmax             | T[$rows,$cols] -1          | rows=1,1000 cols=128,4097 dtype=float16,float32
    gelu     | torch.nn.functional.gelu  | T[$n] approximate="tanh"   | n=1,4097 dtype=float32,bfloat16
    prod     | torch.ops.aten.prod.dim_int | T[$n,7]:positive 1       | n=3,64 dtype=float32
    where    | torch.where               | T[$n]:bool T[$n] T[$n]     | n=16
    addmm    | torch.addmm               | @opinfo                    |

args, separated by spaces: `T[d0,d1,...]` is a tensor (each dimension an int or `$param`; a
string parameter such as shape=1024x1024,20x320x15 gives whole shapes of any rank),
optionally `:dtype` (a torch dtype name or `$param`; default `$dtype` when the sweep has a
dtype, else float32) and `:init` (randn, positive, bool, randint(low,high),
uniform(low,high)); `[T[...],T[...]]` is a list of tensors (cat, stack, index), its items
tensors, `$param`s or literals, separated by commas without spaces (`[$cols]` too); `key=value` is a keyword argument;
anything else is a JSON literal
(`-1`, `2.5`, `true`, `[0,1]`, `"tanh"`) or a `$param`. sweep: `key=v1,v2,...` (JSON values,
else strings). `@opinfo` (with --opinfo) draws the cases from torch's OpInfo database
(`torch.testing._internal.common_methods_invocations`): one entry per sample input, named
`<name>_opinfo<k>`. That module imports `expecttest`; where it cannot be imported the tool
says so and exits 2 (`--check-opinfo` only reports whether it can).
"""
import argparse
import json
import re
import sys

TENSOR = re.compile(r"^T\[([^\]]*)\](.*)$")
INIT = re.compile(r"^(randint|uniform)\(\s*(-?[0-9.eE+-]+)\s*,\s*(-?[0-9.eE+-]+)\s*\)$")
INITS = ("randn", "positive", "bool", "randint", "uniform")


class ListError(ValueError):
    pass


def opinfo_status():
    """(available, why): whether torch's OpInfo database imports here."""
    try:
        from torch.testing._internal import common_methods_invocations as cmi  # noqa: F401
    except ImportError as error:
        missing = getattr(error, "name", None)
        why = f"{type(error).__name__}: {error}"
        if missing == "expecttest":
            why = ("torch.testing._internal.common_methods_invocations imports expecttest, which is not installed "
                   f"here ({why})")
        return False, why
    except Exception as error:  # noqa: BLE001 - anything the module's import raises
        return False, f"torch.testing._internal.common_methods_invocations does not import: {type(error).__name__}: {error}"
    return True, "torch's OpInfo database is available"


def literal(text, where):
    if text.startswith("$"):
        return text
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise ListError(f"{where}: {text!r} is neither a tensor T[...], key=value, $param nor a JSON literal "
                        f"({error.msg})") from error


def tensor_spec(match, sweep, where):
    dims = [d.strip() for d in match.group(1).split(",") if d.strip()]
    shape = []
    for d in dims:
        if d.startswith("$"):
            shape.append(d)
        elif re.fullmatch(r"[0-9]+", d):
            shape.append(int(d))
        else:
            raise ListError(f"{where}: tensor dimension {d!r} is neither an int nor $param")
    spec = {"shape": shape}
    dtype = "$dtype" if "dtype" in sweep else None
    for part in [p for p in match.group(2).split(":") if p]:
        init = INIT.match(part)
        if init:
            spec.update(init=init.group(1), low=float(init.group(2)), high=float(init.group(3)))
            if init.group(1) == "randint":
                spec["low"], spec["high"] = int(spec["low"]), int(spec["high"])
        elif part in INITS:
            spec["init"] = part
        elif re.fullmatch(r"\$?[A-Za-z_][A-Za-z0-9_]*", part):
            dtype = part
        else:
            raise ListError(f"{where}: tensor option {part!r} is neither a dtype nor an init ({', '.join(INITS)})")
    if spec.get("init") == "bool" and dtype == "$dtype":
        dtype = None  # a mask stays bool whatever the sweep's dtype
    if dtype is not None:
        spec["dtype"] = dtype
    return spec


def argument(token, sweep, where):
    """A tensor, a list holding tensors, or a literal."""
    match = TENSOR.match(token)
    if match:
        return tensor_spec(match, sweep, where)
    if token.startswith("[") and token.endswith("]") and ("T[" in token or "$" in token):
        return [argument(item, sweep, where) for item in split_args(token[1:-1], separator=",")]
    return literal(token, where)


def split_args(text, separator=None):
    """Space-separated tokens (or `separator`-separated), keeping brackets and quoted strings whole."""
    tokens, current, depth, quote = [], "", 0, None
    for c in text:
        if quote:
            current += c
            quote = None if c == quote else quote
        elif c in "\"'":
            quote, current = c, current + c
        elif c in "[(":
            depth, current = depth + 1, current + c
        elif c in "])":
            depth, current = depth - 1, current + c
        elif depth == 0 and (c == separator if separator else c.isspace()):
            if current:
                tokens.append(current)
            current = ""
        else:
            current += c
    if current:
        tokens.append(current)
    return tokens


def parse_sweep(text, where):
    sweep = {}
    for item in text.split():
        key, sep, values = item.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key) or not values:
            raise ListError(f"{where}: sweep item {item!r} is not key=v1,v2,...")
        parsed = []
        for v in values.split(","):
            try:
                parsed.append(json.loads(v))
            except json.JSONDecodeError:
                parsed.append(v)
        if len(set(map(json.dumps, parsed))) != len(parsed):
            raise ListError(f"{where}: sweep {key} repeats a value")
        sweep[key] = parsed
    return sweep


def parse_line(line, where):
    columns = [c.strip() for c in line.split("|")]
    if len(columns) < 3 or len(columns) > 5:
        raise ListError(f"{where}: expected 'name | op | args | sweep [| tags]', got {len(columns)} column(s)")
    name, op, args = columns[:3]
    sweep = parse_sweep(columns[3], where) if len(columns) >= 4 else {}
    tags = columns[4].split() if len(columns) == 5 else []
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_-]*", name):
        raise ListError(f"{where}: operator name {name!r} must be letters, digits, _ and -")
    if not re.fullmatch(r"torch(\.[A-Za-z_][A-Za-z0-9_]*)+", op):
        raise ListError(f"{where}: op {op!r} must be a dotted path under torch (torch.softmax, torch.ops.aten.add.Tensor)")
    if args == "@opinfo":
        return {"name": name, "op": op, "opinfo": True, "sweep": sweep, "tags": tags}
    positional, keyword = [], {}
    for token in split_args(args):
        key, sep, value = token.partition("=")
        target = None
        if sep and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            target, token = key, value
        value = argument(token, sweep, where)
        if target is None:
            if keyword:
                raise ListError(f"{where}: positional argument {token!r} after a keyword argument")
            positional.append(value)
        else:
            keyword[target] = value
    for ref in re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", json.dumps([positional, keyword])):
        if ref not in sweep:
            raise ListError(f"{where}: ${ref} names no sweep parameter")
    return {"name": name, "op": op, "args": positional, "kwargs": keyword, "sweep": sweep, "tags": tags}


def opinfo_entries(item, enable):
    """One entry per OpInfo sample input of the op (CPU samples, float32)."""
    import torch
    from torch.testing._internal.common_methods_invocations import op_db
    short = item["op"].split(".")[-1] if not item["op"].startswith("torch.ops.aten.") else item["op"].split(".")[3]
    infos = [info for info in op_db if info.name == short]
    if not infos:
        raise ListError(f"{item['name']}: the OpInfo database has no op named {short!r}")

    def spec(value):
        if isinstance(value, torch.Tensor):
            init = "bool" if value.dtype == torch.bool else "randint" if not value.is_floating_point() \
                and not value.is_complex() else "randn"
            return {"shape": list(value.shape), "dtype": str(value.dtype).replace("torch.", ""), "init": init}
        if isinstance(value, (list, tuple)):
            return [spec(v) for v in value]
        if isinstance(value, (bool, int, float, str)) or value is None:
            return value
        raise ListError(f"{item['name']}: an OpInfo sample argument of type {type(value).__name__} has no manifest form")
    entries = []
    for k, sample in enumerate(infos[0].sample_inputs("cpu", torch.float32)):
        entries.append({"name": f"{item['name']}_opinfo{k}", "override": {
            "op": item["op"], "enable": enable, "args": [spec(sample.input)] + [spec(a) for a in sample.args],
            "kwargs": {key: spec(v) for key, v in sample.kwargs.items()}}})
    return entries


def build(lines, args):
    enable = args.enable if args.enable else {"enter": args.enter, "exit": args.exit}
    operators, seen = [], set()
    for number, raw in enumerate(lines, 1):
        line = raw.split("#", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        item = parse_line(line, f"{args.list}:{number}")
        if item.get("opinfo"):
            if not args.opinfo:
                raise ListError(f"{args.list}:{number}: @opinfo needs --opinfo")
            entries = opinfo_entries(item, enable)
        else:
            override = {"op": item["op"], "enable": enable, "args": item["args"]}
            if item["kwargs"]:
                override["kwargs"] = item["kwargs"]
            entries = [{"name": item["name"], "override": override}]
            if item["sweep"]:
                entries[0]["sweep"] = item["sweep"]
        if item["tags"]:
            for entry in entries:
                entry["tags"] = list(item["tags"])
                if "non-compute" in item["tags"]:
                    entry["non_compute"] = True  # data movement: outputs judged bitwise, kernels may only move data
        for entry in entries:
            if entry["name"] in seen:
                raise ListError(f"{args.list}:{number}: duplicate operator name {entry['name']!r}")
            seen.add(entry["name"])
        operators.extend(entries)
    if not operators:
        raise ListError(f"{args.list}: no operator listed")
    defaults = {"library": args.library}
    if args.python_path:
        defaults["python_path"] = args.python_path
    defaults.update(json.loads(args.defaults) if args.defaults else {})
    return {"name": args.name, "description": f"Dispatch-override operators of {', '.join(args.library)} "
            f"(written by tools/override_manifest.py from {args.list})", "defaults": defaults, "operators": operators}


def compact_json(manifest):
    """The manifest with one operator a line: a few hundred stay readable and diffable."""
    head = ",\n".join(f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in manifest.items() if k != "operators")
    body = ",\n".join("    " + json.dumps(entry) for entry in manifest["operators"])
    return "{\n" + head + ',\n  "operators": [\n' + body + "\n  ]\n}\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("list", nargs="?", help="the op list (name | op | args | sweep per line)")
    parser.add_argument("--library", action="append", default=[], help="declared library package (repeatable)")
    parser.add_argument("--python-path", action="append", default=[], help="folder relative to the manifest")
    parser.add_argument("--enable", help="module:callable returning the enable context manager")
    parser.add_argument("--enter", help="module:callable that enables (with --exit)")
    parser.add_argument("--exit", help="module:callable that disables (with --enter)")
    parser.add_argument("--name", default="overrides", help="the job's name")
    parser.add_argument("--defaults", help="more default operator fields, as a JSON object")
    parser.add_argument("--opinfo", action="store_true", help="draw @opinfo lines' cases from torch's OpInfo database")
    parser.add_argument("--check-opinfo", action="store_true", help="only say whether the OpInfo database imports")
    parser.add_argument("-o", "--output", help="the manifest to write (default: stdout)")
    args = parser.parse_args(argv)
    if args.check_opinfo or args.opinfo:
        available, why = opinfo_status()
        if args.check_opinfo:
            print(("available: " if available else "not available: ") + why)
            return 0 if available else 1
        if not available:
            print(f"override_manifest: --opinfo: the OpInfo database is not available: {why}", file=sys.stderr)
            return 2
    if not args.list:
        parser.error("the op list is required")
    if not args.library:
        parser.error("--library is required: the packages whose kernels must do the work")
    if bool(args.enable) == bool(args.enter or args.exit) or bool(args.enter) != bool(args.exit):
        parser.error("give --enable, or --enter with --exit")
    try:
        with open(args.list, encoding="utf-8") as f:
            manifest = build(f.read().splitlines(), args)
    except (OSError, ListError, json.JSONDecodeError) as error:
        print(f"override_manifest: {error}", file=sys.stderr)
        return 2
    text = compact_json(manifest)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
