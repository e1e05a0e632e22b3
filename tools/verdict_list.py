#!/usr/bin/env python3
"""A run's verdict list, one line per case, and the difference between two runs' lists.

    tools/verdict_list.py RUN_DIR                 # case, verdict, A/B class (tab-separated)
    tools/verdict_list.py --diff BEFORE AFTER     # exit 1 when a case common to both differs

Read from each run folder's junit.xml, the report every opverify version writes in the same
form (a case's testcase, its failure's type, the A/B class in the message as "[A/B: class]"),
so runs of two versions of opverify can be compared. Cases only one run has are listed apart
and do not make the lists differ (a job file may have gained operators between the versions).
"""
import argparse
import os
import re
import sys
import xml.etree.ElementTree as ET

AB = re.compile(r"\[A/B: ([a-z_]+)")


class Unreadable(Exception):
    """A run folder whose junit.xml cannot be read (a run stopped before writing it)."""


def testcases(run_dir):
    """Each testcase of RUN_DIR/junit.xml as (operator, case id, verdict, message): the verdict
    is "passed", "skipped" or the failure's or error's type, the message its element's (None for
    a pass). Unreadable if the file cannot be read."""
    path = os.path.join(run_dir, "junit.xml")
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        raise Unreadable(f"verdict_list: cannot read {path}: {e}") from e
    for case in root.iter("testcase"):
        verdict, message = "passed", None
        for tag in ("failure", "error", "skipped"):
            node = case.find(tag)
            if node is None:
                continue
            verdict = "skipped" if tag == "skipped" else node.get("type") or tag
            message = node.get("message") or ""
            break
        yield case.get("classname") or "", case.get("name") or "", verdict, message


def verdicts(run_dir):
    """{case id: (verdict, A/B class)} from RUN_DIR/junit.xml; Unreadable if it cannot be read."""
    out = {}
    for _, name, verdict, message in testcases(run_dir):
        found = AB.search(message or "")
        out[name] = (verdict, found.group(1) if found else "")
    return out


def main():
    try:
        return listed()
    except Unreadable as error:
        sys.exit(str(error))


def listed():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", help="one run folder, or two with --diff")
    parser.add_argument("--diff", action="store_true", help="compare the lists of two run folders")
    args = parser.parse_args()
    if not args.diff:
        for run in args.runs:
            for case, (verdict, ab) in sorted(verdicts(run).items()):
                print(f"{case}\t{verdict}\t{ab}")
        return 0
    if len(args.runs) != 2:
        parser.error("--diff takes two run folders")
    before, after = (verdicts(run) for run in args.runs)
    common = sorted(set(before) & set(after))
    changed = [c for c in common if before[c] != after[c]]
    for case in changed:
        print(f"changed\t{case}\t{'/'.join(filter(None, before[case]))} -> {'/'.join(filter(None, after[case]))}")
    for label, only in (("only before", set(before) - set(after)), ("only after", set(after) - set(before))):
        for case in sorted(only):
            side = before if label == "only before" else after
            print(f"{label}\t{case}\t{'/'.join(filter(None, side[case]))}")
    failed = lambda lst: sum(1 for c in common if lst[c][0] != "passed")
    print(f"{len(common)} cases in both: {len(changed)} differ; failed before {failed(before)}, after {failed(after)}; "
          f"{len(set(before) - set(after))} only before, {len(set(after) - set(before))} only after")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
