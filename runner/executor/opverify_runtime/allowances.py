"""Declared exceptions (a manifest's or a command line's `allow_torch`): the torch operators an
operator or a library may use outside its Triton kernels by design, each with its reason.

An allowance is {"op", "why", "where"?, "library"?, "declared_at"}: `op` names a torch operator
in any of its spellings, `where` narrows it to the uses made from one file or package, `library`
(a library-level allowance) narrows it to the uses made from that package's own files, and
`declared_at` names the declaration (a manifest's JSON pointer, or `--allow-torch`).

Names match after normalise(): `torch.sort`, `torch.Tensor.sort`, `Tensor.sort` (a tensor
method `x.sort()`), `aten::sort`, `aten::sort.stable`, `torch.ops.aten.sort.stable` and
`aten::_sort` are all `aten::sort`. A finding that an allowance covers is waived: the case is
still run and judged, and a case whose only violations are waived ones passes as `waived`.
Anything else still fails with its type. docs/MANIFEST.md, "Declared exceptions".

The static lint's type-3 findings are waived in its result (waive_lint); the runtime
evidence's in the trace and profile it judges (waive_runtime)."""
import os
import sys

MAX_FOUND = 8  # findings named per waiver; the count says how many there were
MAX_SITES = 32  # call sites remembered per traced operator


def normalise(name):
    """The one name every spelling of a torch operator maps to: "aten::<name>", the overload,
    the namespace path, leading underscores and the in-place underscore dropped. None for a
    name that is no operator's."""
    if not isinstance(name, str) or not name.strip():
        return None
    text = name.strip()
    if text == "@":
        text = "matmul"
    namespace = "aten"
    if "::" in text:
        namespace, text = text.split("::", 1)
        text = text.split(".")[0]
    else:
        parts = [p for p in text.split(".") if p]
        if parts and parts[0] == "torch":
            parts = parts[1:]
        if len(parts) >= 3 and parts[0] == "ops":  # torch.ops.aten.sort.stable
            namespace, parts = parts[1], parts[2:3]
        elif len(parts) >= 3 and parts[:2] == ["nn", "functional"]:
            parts = parts[2:]
        elif len(parts) >= 2 and parts[0] in ("linalg", "special", "fft"):
            parts = [parts[0] + "_" + parts[-1]]  # ATen's own names: linalg_norm, special_erf
        text = parts[-1] if parts else ""
    core = text.strip("_")
    if not core or not namespace:
        return None
    return f"{namespace}::{core}"


def _components(path):
    return [part for part in str(path).replace(os.sep, "/").split("/") if part and part != "."]


def within(file, where):
    """Whether `file` (a path) is, or lies in, `where`: a file or folder path relative to an
    import root ("liger_kernel/ops/sparsemax.py", "liger_kernel/ops"), or a dotted module or
    package name ("liger_kernel.ops.sparsemax"). Its components must appear in a row in the
    file's path; a last component without ".py" also matches the module file of that name."""
    if not file or not where:
        return False
    wanted = _components(where)
    if len(wanted) == 1 and not wanted[0].endswith(".py") and "." in wanted[0]:
        wanted = wanted[0].split(".")
    have = _components(os.path.normpath(file))
    options = [wanted]
    if wanted and not wanted[-1].endswith(".py"):
        options.append(wanted[:-1] + [wanted[-1] + ".py"])
    for option in options:
        n = len(option)
        if n and any(have[i:i + n] == option for i in range(len(have) - n + 1)):
            return True
    return False


def covers(allowance, op, file):
    """Whether the allowance covers a use of the normalised operator `op` made from `file`
    (None: not known)."""
    if op is None or normalise(allowance.get("op")) != op:
        return False
    if allowance.get("where") and not within(file, allowance["where"]):
        return False
    if allowance.get("library") and not within(file, allowance["library"]):
        return False  # a library's exception covers its own files only
    return True


def _first_cover(allow, op, file):
    for index, allowance in enumerate(allow):
        if covers(allowance, op, file):
            return index
    return None


def _waiver(allowance):
    kept = {key: allowance[key] for key in ("op", "why", "where", "library", "declared_at") if allowance.get(key)}
    kept["operator"] = normalise(allowance.get("op"))
    kept["found"] = []
    kept["found_count"] = 0
    return kept


def _note(waivers, allow, index, finding):
    waiver = waivers.setdefault(index, _waiver(allow[index]))
    waiver["found_count"] += 1
    if len(waiver["found"]) < MAX_FOUND:
        waiver["found"].append(finding)


def unused(allow, waivers):
    """The allowances of `allow` that no waiver used (their declared_at and op)."""
    used = {w.get("declared_at") for w in waivers}
    return [{"op": a.get("op"), "declared_at": a.get("declared_at")} for a in allow
            if a.get("declared_at") not in used]


# ---- the static lint -------------------------------------------------------------------------

def torch_findings(result):
    """The lint result's type-3 findings that name a torch operator, structured:
    [{"op": "aten::sort", "name": "torch.sort", "file", "line", "check", "source": "static"}]."""
    out = []
    for name, check in (result.get("checks") or {}).items():
        if check.get("regression_type") != 3:
            continue
        for v in list(check.get("violations", [])) + list(check.get("allowed", [])):
            if v.get("op"):
                out.append({"op": normalise(v["op"]), "name": v["op"], "file": v.get("file", result.get("file")),
                            "line": v.get("line"), "check": name, "source": "static"})
    return out


def waive_lint(result, allow):
    """Moves the type-3 violations the allowances cover out of each check's "violations" into
    its "allowed" list, drops type 3 when none is left, and records what was waived under
    result["allow_torch"] = {"waived": [...], "unused": [...]}. Types other than 3 stay.
    Returns the result (changed in place). Without allowances the result is unchanged."""
    if not allow or "checks" not in result:
        return result
    waivers = {}
    remaining = False
    for name, check in result["checks"].items():
        if check.get("regression_type") != 3 or check.get("passed", True):
            continue
        kept = []
        for v in check.get("violations", []):
            op = normalise(v.get("op"))
            file = v.get("file", result.get("file"))
            index = _first_cover(allow, op, file)
            if index is None:
                kept.append(v)
                continue
            check.setdefault("allowed", []).append(dict(v, allowed_by=allow[index].get("declared_at")))
            _note(waivers, allow, index, {"name": v.get("op"), "file": file, "line": v.get("line"),
                                          "source": "static"})
        check["violations"] = kept
        check["passed"] = not kept
        remaining = remaining or bool(kept)
    types = [t for t in result.get("regression_types", []) if t != 3 or remaining]
    result["regression_types"] = types
    result["regression_type"] = types[0] if types else None
    result["valid"] = not types and "error" not in result
    used = [waivers[i] for i in sorted(waivers)]
    result["allow_torch"] = {"waived": used, "unused": unused(allow, used)}
    result["torch_ops"] = torch_findings(result)
    if used and result["valid"]:
        result["suggestion"] = ("No regression found beyond the declared exceptions (allow_torch): "
                                + ", ".join(f"{w['op']} ({w['why']})" for w in used) + ".")
    return result


def format_waivers(result):
    """Lines for `opverify lint`'s text output: what was waived, and allowances not needed."""
    block = result.get("allow_torch")
    if not block:
        return ""
    lines = []
    for w in block.get("waived", []):
        where = ", ".join(f"{f['file']}:{f['line']}" for f in w["found"])
        more = w["found_count"] - len(w["found"])
        lines.append(f"waived: {w['op']} ({w['why']}) at {where}" + (f" and {more} more" if more > 0 else ""))
    for u in block.get("unused", []):
        lines.append(f"warning: allowance {u['op']} ({u['declared_at']}) was not needed: stale")
    return "\n".join(lines) + ("\n" if lines else "")


# ---- the runtime evidence --------------------------------------------------------------------

def call_site(skip_folders):
    """(file, line) of the innermost frame outside `skip_folders` (torch's and opverify's own
    code): where user or library code called the operator being dispatched; None when none."""
    frame = sys._getframe(1)
    while frame is not None:
        name = frame.f_code.co_filename
        if not name.startswith(skip_folders) and not name.startswith("<"):
            return name, frame.f_lineno
        frame = frame.f_back
    return None


def skipped_folders(torch):
    """The folders call_site looks past: torch's package and this runtime's."""
    return tuple(os.path.dirname(os.path.abspath(m.__file__)) + os.sep
                 for m in (torch, sys.modules[__name__]))


def record_site(trace, name):
    """Remembers where operator `name` was called from (DispatchTrace, for a call on a device):
    trace.sites[name] holds (file, line) pairs, (None, None) for a call no such frame made;
    past MAX_SITES the name goes to trace.sites_overflow instead."""
    sites = trace.sites.setdefault(name, set())
    if len(sites) >= MAX_SITES:
        trace.sites_overflow.add(name)
        return
    sites.add(call_site(trace.skipped) or (None, None))


def _kernels_of_allowed(prof, allowed_ops):
    """Device kernels the profile shows launched only from inside allowed operators (an
    event's CPU-op ancestors), by name."""
    inside, outside = set(), set()
    events = prof.events() if prof is not None and hasattr(prof, "events") else []
    for event in events or []:
        kernels = [getattr(k, "name", None) for k in getattr(event, "kernels", None) or []]
        if not kernels:
            continue
        node, allowed = event, False
        for _ in range(64):
            if node is None:
                break
            if normalise(getattr(node, "name", "")) in allowed_ops and str(getattr(node, "name", "")).startswith("aten::"):
                allowed = True
                break
            node = getattr(node, "cpu_parent", None)
        (inside if allowed else outside).update(k for k in kernels if k)
    return inside - outside


def waive_runtime(allow, trace, kernels, inside, prof=None):
    """The runtime evidence's torch compute the allowances cover, taken out of what is judged:
    operators of the dispatch trace (each recorded call site covered; trace.allowed keeps them
    out of compute_ops), operators the library's registered kernels ran (`inside`; a library's
    or an un-narrowed allowance: their sites are the library's kernels), and the device kernels
    launched only from inside allowed operators (not weighed as foreign). Returns (waivers,
    kernels, inside) with the covered parts removed."""
    waivers = {}
    for name, (calls, devices) in sorted(trace.compute_ops().items()):
        op = normalise(name)
        sites = sorted(trace.sites.get(name) or {(None, None)}, key=lambda s: (s[0] or "", s[1] or 0))
        covering = [_first_cover(allow, op, file) for file, _ in sites]
        if None in covering or name in trace.sites_overflow:
            continue
        trace.allowed.add(name)
        for index, (file, line) in zip(covering, sites):
            _note(waivers, allow, index, {"name": f"aten::{name}", "file": file, "line": line, "source": "runtime",
                                          "calls": calls, "devices": sorted(devices)})
    kept_inside = {}
    for registered, ops in (inside or {}).items():
        for name, entry in ops.items():
            op = normalise(name)
            index = next((i for i, a in enumerate(allow) if normalise(a.get("op")) == op and not a.get("where")), None)
            if index is not None and entry[1] and set(entry[1]) - {"cpu"}:
                _note(waivers, allow, index, {"name": f"aten::{name}", "file": None, "line": None,
                                              "source": "runtime", "inside": registered})
                continue
            kept_inside.setdefault(registered, {})[name] = entry
    allowed_ops = {normalise(name) for name in trace.allowed}
    launched = _kernels_of_allowed(prof, allowed_ops) if allowed_ops else set()
    kept_kernels = kernels if kernels is None else {k: v for k, v in kernels.items() if k not in launched}
    return [waivers[i] for i in sorted(waivers)], kept_kernels, kept_inside
