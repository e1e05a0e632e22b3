#!/usr/bin/python3
"""Fails when a file under runner/ or reduce/ includes a header of a folder on
its own floor or a higher one, is over 500 lines without docs/ARCHITECTURE.md
saying why, or holds a function over 80 lines (C++ or Python; none is
allowed more); and when a CMake target links a library that
docs/ARCHITECTURE.md says it never links (directly or through another). The
floors, the long files and the forbidden links are read from
docs/ARCHITECTURE.md.

Usage: tests/check_floors.py [SOURCE_DIR]"""
import ast
import os
import re
import sys

MAX_LINES = 500
MAX_FUNCTION_LINES = 80
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


def include_problems(path, text, floor_of):
    own = folder_of(path, floor_of)
    if own is None:
        return [f"{path}: its folder is on no floor of docs/ARCHITECTURE.md"]
    problems = []
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
    return problems


# --- Functions over MAX_FUNCTION_LINES ---------------------------------------

def blank_out(text):
    """C++ source with comments, preprocessor lines, string and character
    literals replaced by spaces (newlines kept), so braces and parentheses in
    them do not count."""
    out = []
    i, n = 0, len(text)
    while i < n:
        raw = re.match(r'R"([^(\s]*)\(', text[i:i + 20]) if text[i] == "R" else None
        if raw and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = text.find(")" + raw.group(1) + '"', i)
            end = n if end < 0 else end + len(raw.group(1)) + 2
        elif text[i] == "#" and text[text.rfind("\n", 0, i) + 1:i].strip() == "":
            end = i  # a preprocessor line, with its continuations
            while True:
                end = text.find("\n", end)
                if end < 0 or text[end - 1] != "\\":
                    break
                end += 1
            end = n if end < 0 else end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
        elif text.startswith("/*", i):
            end = text.find("*/", i)
            end = n if end < 0 else end + 2
        elif text[i] in "\"'" and not (text[i] == "'" and i > 0 and text[i - 1].isalnum()):
            end = i + 1
            while end < n and text[end] != text[i] and text[end] != "\n":
                end += 2 if text[end] == "\\" else 1
            end = min(end + 1, n)
        else:
            out.append(text[i])
            i += 1
            continue
        out.append(re.sub(r"[^\n]", " ", text[i:end]))
        i = end
    return "".join(out)


def matching_brace(code, start):
    """The index of the brace that closes the one at `start`."""
    depth = 0
    for i in range(start, len(code)):
        if code[i] == "{":
            depth += 1
        elif code[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return len(code) - 1


CONTAINER = re.compile(r"^(?:template\s*<.*>\s*)?(?:namespace\b|extern\s*$|(?:class|struct|union)\b[^(]*$)", re.S)
QUALIFIERS = {"const", "noexcept", "override", "final", "mutable", "volatile"}


def function_name(head):
    """`Foo::Bar` of `int Foo::Bar(int x) const`, or None when `head` (the text
    before a brace) is no function's signature."""
    head = re.sub(r"^\s*template\s*<[^{;]*?>\s*(?=[\w~:])", "", head.strip(), flags=re.S)
    if not head or CONTAINER.match(head):
        return None
    if re.match(r"(?:enum|if|for|while|switch|catch|do|else|try)\b", head) or "(" not in head:
        return None
    match = re.search(r"((?:[\w~]+::)*(?:operator\s*(?:\(\)|[^\s(]+)|[\w~]+))\s*\(", head)
    if not match or re.search(r"=\s*$|^\s*(?:return|auto\s+\w+\s*=)", head[:match.start()]):
        return None
    return match.group(1).replace(" ", "")


def cxx_functions(text):
    """(name, first line, line count) of each function body outside another
    function (lambdas count toward their function)."""
    code = blank_out(text)
    functions = []
    i, head_start, depth_stack = 0, 0, []
    while i < len(code):
        ch = code[i]
        if ch in ";}":
            if ch == "}" and depth_stack:
                depth_stack.pop()
            head_start = i + 1
        elif ch == "{":
            head = code[head_start:i]
            if re.search(r"\)\s*:[^:]", head) and re.search(r"[\w>]\s*$", head) and \
                    head.split()[-1] not in QUALIFIERS:
                i = matching_brace(code, i) + 1  # a member's brace initialiser in a constructor's list
                continue
            name = function_name(head)
            if name is None and CONTAINER.match(head.strip()):
                depth_stack.append(i)
                head_start = i + 1
            else:
                end = matching_brace(code, i)
                if name is not None:
                    first = code.count("\n", 0, head_start + len(head) - len(head.lstrip())) + 1
                    functions.append((name, first, code.count("\n", 0, end) + 2 - first))
                i, head_start = end + 1, end + 1
                continue
        i += 1
    return functions


def python_functions(text, path):
    functions = []
    for node in ast.walk(ast.parse(text, path)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append((node.name, node.lineno, node.end_lineno - node.lineno + 1))
    return functions


def function_problems(path, text):
    functions = python_functions(text, path) if path.endswith(".py") else cxx_functions(text)
    return [f"{path}:{first}: {name} is {lines} lines; the most is {MAX_FUNCTION_LINES}: split it"
            for name, first, lines in functions if lines > MAX_FUNCTION_LINES]


# --- Forbidden links ----------------------------------------------------------

def cmake_links(root):
    """{target: [what target_link_libraries names for it]} over every CMakeLists.txt."""
    links = {}
    for directory, dirs, names in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "build"]
        if "CMakeLists.txt" not in names:
            continue
        with open(os.path.join(directory, "CMakeLists.txt"), encoding="utf-8") as f:
            text = re.sub(r"#[^\n]*", "", f.read())
        for call in re.finditer(r"target_link_libraries\s*\(([^)]*)\)", text):
            target, *named = call.group(1).split()
            links.setdefault(target, []).extend(
                n for n in named if n not in ("PUBLIC", "PRIVATE", "INTERFACE"))
    return links


def linked(target, links):
    """Everything `target` links, directly or through the libraries it links."""
    found, todo = set(), [target]
    while todo:
        for library in links.get(todo.pop(), []):
            if library not in found:
                found.add(library)
                todo.append(library)
    return found


def link_problems(root, architecture):
    links = cmake_links(root)
    problems = []
    for line in between(architecture, "links").splitlines():
        if "never links" not in line:
            continue
        targets, forbidden = (part.split() for part in line.split("never links", 1))
        for target in targets:
            for library in sorted(linked(target, links) & set(forbidden)):
                problems.append(f"{target} links {library} (docs/ARCHITECTURE.md: it never links it)")
    return problems


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), ".."))
    with open(os.path.join(root, "docs", "ARCHITECTURE.md"), encoding="utf-8") as f:
        architecture = f.read()
    floor_of = floors(architecture)
    long_files_named = between(architecture, "long files")
    problems = link_problems(root, architecture)
    for top in ("runner", "reduce"):
        for directory, dirs, names in os.walk(os.path.join(root, top)):
            dirs.sort()
            for name in sorted(names):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(directory, name), root)
                with open(os.path.join(root, path), encoding="utf-8") as f:
                    text = f.read()
                if text.count("\n") > MAX_LINES and f"`{path}`" not in long_files_named:
                    problems.append(f"{path}: {text.count(chr(10))} lines, not named in docs/ARCHITECTURE.md")
                if name.endswith((".h", ".cc", ".py")):
                    problems += function_problems(path, text)
                if not name.endswith(".py"):
                    problems += include_problems(path, text, floor_of)
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
