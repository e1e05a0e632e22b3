#!/usr/bin/python3
"""Fails when a file under runner/ or reduce/ includes a header of a folder on
its own floor or a higher one, or is over 500 lines without docs/ARCHITECTURE.md
saying why. The floors and the long files are read from docs/ARCHITECTURE.md.

Usage: tests/check_floors.py [SOURCE_DIR]"""
import os
import re
import sys

MAX_LINES = 500
SOURCES = (".h", ".cc", ".in", ".py")


def between(text, name):
    match = re.search(f"<!-- {name}: begin -->(.*?)<!-- {name}: end -->", text, re.S)
    if not match:
        sys.exit(f"docs/ARCHITECTURE.md has no '{name}' block")
    return match.group(1)


def floors(text):
    floor_of = {}
    for line in between(text, "floors").splitlines():
        fields = line.split()
        if fields and fields[0].isdigit():
            for folder in fields[1:]:
                floor_of[folder] = int(fields[0])
    return floor_of


def folder_of(path, floor_of):
    """The longest listed folder that holds `path`, or None."""
    best = None
    for folder in floor_of:
        if path.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    with open(os.path.join(root, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        architecture = f.read()
    floor_of = floors(architecture)
    long_files_named = between(architecture, "long files")
    problems = []
    for top in ("runner", "reduce"):
        for directory, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    text = f.read()
                if text.count("\n") > MAX_LINES and f"`{path}`" not in long_files_named:
                    problems.append(f"{path}: {text.count(chr(10))} lines, not named in docs/ARCHITECTURE.md")
                if name.endswith(".py"):
                    continue
                own = folder_of(path, floor_of)
                if own is None:
                    problems.append(f"{path}: its folder is on no floor of docs/ARCHITECTURE.md")
                    continue
                for number, line in enumerate(text.splitlines(), 1):
                    match = re.match(r'\s*#\s*include\s+"((?:runner|reduce)/[^"]+)"', line)
                    if not match:
                        continue
                    target = folder_of(match.group(1), floor_of)
                    if target is None or target == own:
                        continue
                    if floor_of[target] >= floor_of[own]:
                        problems.append(f"{path}:{number}: includes {match.group(1)}: {target} (floor "
                                        f"{floor_of[target]}) is not below {own} (floor {floor_of[own]})")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
