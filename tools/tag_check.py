#!/usr/bin/env python3
"""A night's verdicts against what its job file says to expect, per operator.

    tools/tag_check.py JOB.json CASES.jsonl...    # the --progress jsonl streams of one or more runs
    tools/tag_check.py JOB.json RUN_DIR...        # or run folders (their junit.xml)

A library's job file tags each operator whose failure is attributed (docs/LIBRARIES.md):
library-defect, reference-suspect, nondeterministic, torch-in-library, opverify-false-positive
(tests/python/test_gpu_library.py's KNOWN), or a declared failure: a planted defect's, by an
`expect:ERROR` tag or by its task file's EXPECTED_ERROR_TYPE (an operator with a `dir`:
<job file's folder>/<dir>/<name>_torch.py). Read against the cases a run finished (a case seen
in several streams counts as its last line), each operator is one of:

    unexplained   a failure with no tag, or a declared failure that failed otherwise (another
                  error type): opverify's false failure until someone attributes it
    missed        a declared failure, and every case passed: a planted defect not caught
    stale         tagged, and every case passed: the tag's cause is gone, remove the tag
    expected      tagged, and a case failed (a declared failure: every failed case as declared)
    passed        untagged, every case passed (waived cases count as passed)
    not run       no case in the streams

Prints the unexplained, missed and stale operators with each one's first failure, then a count of each
kind. Exit 1 when any operator is unexplained, missed or stale, 0 otherwise, 2 for bad input.
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from task_file import task_constants  # noqa: E402
from verdict_list import Unreadable, testcases  # noqa: E402

KNOWN_TAGS = ("library-defect", "reference-suspect", "nondeterministic", "torch-in-library",
              "opverify-false-positive")
KINDS = ("unexplained", "missed", "stale", "expected", "passed", "not run")


def junit_cases(run_dir):
    """The cases of RUN_DIR/junit.xml as --progress lines: {case_id, op (the testcase's
    classname), verdict, error_type, message}; skipped cases (not run) are left out."""
    for op, case_id, verdict, message in testcases(run_dir):
        if verdict == "skipped":
            continue
        failed = verdict != "passed"
        yield {"case_id": case_id, "op": op, "verdict": "failed" if failed else "passed",
               "error_type": verdict if failed else None, "message": message}


def load_cases(paths):
    """{case id: its last line} over the streams (and run folders' junit.xml); lines that are not
    whole JSON objects are skipped (a stream cut by a stopped run, error lines mixed in)."""
    cases = {}
    for path in paths:
        if os.path.isdir(path):
            cases.update((c["case_id"], c) for c in junit_cases(path))
            continue
        with open(path, encoding="utf-8") as f:
            for line in f:
                if not line.startswith("{"):
                    continue
                try:
                    case = json.loads(line)
                except ValueError:
                    continue
                if isinstance(case, dict) and isinstance(case.get("case_id"), str):
                    cases[case["case_id"]] = case
    return cases


def attribution(entry, job_dir):
    """The entry's attribution tags, with `expect:ERROR` for the failure its task file declares
    (EXPECTED_ERROR_TYPE, a planted defect's) where its tags do not say one."""
    tags = [t for t in entry.get("tags", []) if t in KNOWN_TAGS or t.startswith("expect:")]
    if "dir" in entry and not any(t.startswith("expect:") for t in tags):
        task = os.path.join(job_dir, entry["dir"], f"{entry['name']}_torch.py")
        try:
            declared = task_constants(task).get("EXPECTED_ERROR_TYPE") if os.path.isfile(task) else None
        except SyntaxError as e:
            raise ValueError(f"{task}:{e.lineno}: {e.msg}") from e
        if isinstance(declared, str):
            tags.append(f"expect:{declared}")
    return tags


def classify(operators, cases, job_dir="."):
    """[(name, kind, tags, first failed case or None, cases seen)] in the job file's order."""
    by_op = {}
    for case in cases.values():
        by_op.setdefault(case.get("op"), []).append(case)
    rows = []
    for entry in operators:
        name = entry["name"]
        tags = attribution(entry, job_dir)
        seen = by_op.get(name, [])
        failed = [c for c in seen if c.get("verdict") == "failed"]
        declared = {t.split(":", 1)[1] for t in tags if t.startswith("expect:")}
        otherwise = [c for c in failed if declared and c.get("error_type") not in declared]
        if not seen:
            kind = "not run"
        elif otherwise:  # a planted defect caught for another reason is not caught as planted
            kind, failed = "unexplained", otherwise
        elif failed:
            kind = "expected" if tags else "unexplained"
        else:
            kind = "missed" if declared else "stale" if tags else "passed"
        rows.append((name, kind, tags, failed[0] if failed else None, len(seen)))
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("job", help="the job file (its operators' tags)")
    parser.add_argument("cases", nargs="+", help="--progress jsonl streams of the job's runs, or run folders")
    args = parser.parse_args(argv)
    try:
        with open(args.job, encoding="utf-8") as f:
            operators = json.load(f)["operators"]
        cases = load_cases(args.cases)
        rows = classify(operators, cases, os.path.dirname(os.path.abspath(args.job)))
    except (OSError, ValueError, KeyError, TypeError, Unreadable) as e:
        print(f"tag_check: {e}", file=sys.stderr)
        return 2
    for name, kind, tags, first, seen in rows:
        if kind == "unexplained":
            print(f"UNEXPLAINED {name}: {first.get('case_id')} {first.get('error_type')}: "
                  f"{(first.get('message') or '')[:300]}")
        elif kind == "missed":
            print(f"MISSED {name}: declared {', '.join(t for t in tags if t.startswith('expect:'))}, "
                  f"and its {seen} cases passed")
        elif kind == "stale":
            print(f"STALE {name}: tagged {', '.join(tags)}, and its {seen} cases passed")
    counts = {kind: sum(1 for row in rows if row[1] == kind) for kind in KINDS}
    print(", ".join(f"{counts[kind]} {kind}" for kind in KINDS) + f" (of {len(rows)} operators)")
    return 1 if counts["unexplained"] or counts["missed"] or counts["stale"] else 0


if __name__ == "__main__":
    sys.exit(main())
