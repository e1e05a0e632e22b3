#!/usr/bin/env python3
"""A library job's operators with the benchmark and the ghost replay on, and what came of it.

    tools/override_check.py prepare JOB OUT --ops abs,addmm,...   # JOB's operators named, bench and
                                                                   # ghost_replay on, one seed, to OUT
                                  [--no-ghost]                     # the benchmark alone
    tools/override_check.py report RUN_DIR [--json FILE]           # verdicts, and each shape's
                                                                   # latency against do_bench's

OUT is written beside JOB (the manifest's folders are relative to it). `report` reads the run
folder's junit.xml (tools/verdict_list.py) and each operator's perf_result.json: for every shape
the implementation's median (`avg_latency_ms`), triton.testing.do_bench's median of the same call
(`stats.do_bench_ms`, override operators on cuda: docs/BENCH.md), their ratio, and the
framework's median. A ghost replay that finds the outputs unchanged fails its case as
`GhostReplayUnchanged`; on a library whose kernels all ran, that is a false failure, listed apart
with its message (how many own launches the replay skipped or stopped at the launch hook), beside
the replays that were not judged because own launches got through the no-ops (the cases'
warnings, which only runs from before the replay stopped such launches have). A run stopped before
its junit.xml, or an operator's file cut mid-write, is said on stderr (exit 1) and the rest is
reported.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from verdict_list import Unreadable, verdicts  # noqa: E402


def prepare(job, out, ops, ghost=True):
    with open(job) as f:
        manifest = json.load(f)
    wanted = [o for o in ops.split(",") if o]
    by_name = {entry.get("name"): entry for entry in manifest["operators"]}
    missing = [o for o in wanted if o not in by_name]
    if missing:
        sys.exit(f"override_check: {job} has no operator {', '.join(missing)}")
    manifest["operators"] = [by_name[o] for o in wanted]
    defaults = manifest.setdefault("defaults", {})
    defaults["bench"] = dict(defaults.get("bench") or {}, enabled=True)
    defaults["ghost_replay"] = ghost  # off: a replay's failure does not keep a case from its benchmark
    defaults["seeds"] = 1  # what is checked is the timing and the replay, not the verdict's seeds
    manifest["name"] = manifest.get("name", "job") + "_check"
    if os.path.dirname(os.path.abspath(out)) != os.path.dirname(os.path.abspath(job)):
        sys.exit(f"override_check: {out} must be beside {job} (its folders are relative to it)")
    with open(out, "w") as f:
        json.dump(manifest, f, indent=1)
    print(f"{out}: {len(wanted)} operators of {job}, bench" + (" and ghost replay" if ghost else "") + " on")


def operator_files(run_dir, name):
    """(operator, the parsed ops/<operator>/NAME) for each operator of the run that has one; one
    that cannot be read (a run stopped mid-write) is named on stderr and left out, the rest
    reported."""
    ops = os.path.join(run_dir, "ops")
    for op in sorted(os.listdir(ops)) if os.path.isdir(ops) else []:
        path = os.path.join(ops, op, name)
        if not os.path.exists(path):
            continue
        try:
            with open(path) as f:
                parsed = json.load(f)
        except (OSError, ValueError) as error:
            print(f"override_check: {path} left out: {error}", file=sys.stderr)
            continue
        if isinstance(parsed, dict):
            yield op, parsed
        else:
            print(f"override_check: {path} left out: not a JSON object", file=sys.stderr)


def shape_rows(run_dir):
    rows = []
    for op, perf in operator_files(run_dir, "perf_result.json"):
        for shape in perf.get("per_shape_results") or []:
            impl = shape.get("implementation") or {}
            ours = impl.get("avg_latency_ms")
            theirs = (impl.get("stats") or {}).get("do_bench_ms")
            rows.append({"op": op, "case_idx": shape.get("case_idx"), "passed": shape.get("passed"), "error_type": shape.get("error_type") or None,
                         "ours_ms": ours, "do_bench_ms": theirs,
                         "ours_over_do_bench": ours / theirs if ours and theirs else None,
                         "framework_ms": (shape.get("framework") or {}).get("avg_latency_ms"),
                         "speedup": shape.get("speedup")})
    return rows


def ghost_findings(run_dir):
    """{operator: {"unchanged": [its GhostReplayUnchanged messages], "not_judged": [its cases'
    "ghost replay: not judged" warnings]}} from each operator's verify_result.json: how many own
    launches each replay skipped or stopped at the launch hook. (Runs before the replay stopped
    such launches at the hook warned "not judged" where own launches got through the no-ops;
    their folders still read.)"""
    found = {}
    for op, result in operator_files(run_dir, "verify_result.json"):
        unchanged = [fl.get("error_msg", "") for fl in result.get("failures") or []
                     if fl.get("error_type") == "GhostReplayUnchanged"]
        not_judged = [w for case in (result.get("opverify") or {}).get("cases") or []
                      for w in case.get("warnings") or []
                      if isinstance(w, str) and w.startswith("ghost replay: not judged")]
        if unchanged or not_judged:
            found[op] = {"unchanged": unchanged, "not_judged": not_judged}
    return found


def report(run_dir, json_out):
    try:
        cases = verdicts(run_dir)
        unread = False
    except Unreadable as error:  # no junit.xml (a run stopped before it): the operators' files still tell
        print(error, file=sys.stderr)
        cases, unread = {}, True
    ghosts = sorted(c for c, (v, _) in cases.items() if v == "GhostReplayUnchanged")
    failed = {c: v for c, (v, _) in cases.items() if v != "passed"}
    findings = ghost_findings(run_dir)
    print(f"{run_dir}: {len(cases)} cases, {len(cases) - len(failed)} passed, "
          f"{len(ghosts)} GhostReplayUnchanged, "
          f"{sum(len(f['not_judged']) for f in findings.values())} ghost replays not judged")
    for case, verdict in sorted(failed.items()):
        print(f"  {case}\t{verdict}")
    for op, found in findings.items():  # the first of each kind, whole: the skipped count, the names
        for kind in ("unchanged", "not_judged"):
            if found[kind]:
                print(f"  {op} {kind} ({len(found[kind])}): {found[kind][0]}")
    rows = shape_rows(run_dir)
    print(f"{'operator':<22} {'case':>4} {'ours ms':>10} {'do_bench ms':>12} {'ratio':>7} {'torch ms':>10}")
    for r in rows:
        def cell(v, fmt):
            return format(v, fmt) if isinstance(v, (int, float)) else "-"
        print(f"{r['op']:<22} {cell(r['case_idx'], 'd'):>4} {cell(r['ours_ms'], '.4f'):>10} "
              f"{cell(r['do_bench_ms'], '.4f'):>12} {cell(r['ours_over_do_bench'], '.3f'):>7} "
              f"{cell(r['framework_ms'], '.4f'):>10}")
    ratios = sorted(r["ours_over_do_bench"] for r in rows if r["ours_over_do_bench"])
    if ratios:
        print(f"ours / do_bench over {len(ratios)} shapes: median {ratios[len(ratios) // 2]:.3f}, "
              f"min {ratios[0]:.3f}, max {ratios[-1]:.3f}")
    if json_out:
        with open(json_out, "w") as f:
            json.dump({"cases": {c: list(v) for c, v in cases.items()}, "ghost_unchanged": ghosts,
                       "ghost_findings": findings, "shapes": rows}, f, indent=1)
    return 1 if ghosts or unread else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("prepare")
    p.add_argument("job")
    p.add_argument("out")
    p.add_argument("--ops", required=True, help="comma-separated operator names of JOB")
    p.add_argument("--no-ghost", action="store_true", help="the benchmark without the ghost replay")
    r = sub.add_parser("report")
    r.add_argument("run_dir")
    r.add_argument("--json", help="also write the rows to this file")
    args = parser.parse_args()
    if args.command == "prepare":
        prepare(args.job, args.out, args.ops, ghost=not args.no_ghost)
        return 0
    return report(args.run_dir, args.json)


if __name__ == "__main__":
    sys.exit(main())
