"""tests/check_floors.py on small planted trees: each rule fails on its case
and passes beside it (ctest layout.check_floors_test)."""
import os
import subprocess
import sys

import pytest

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_floors.py")

ARCHITECTURE = """# Architecture
<!-- floors: begin -->
2  reduce
1  runner/verify
0  runner/common
<!-- floors: end -->
<!-- long files: begin -->
<!-- long files: end -->
<!-- links: begin -->
opverify_reduce never links opverify_verify
<!-- links: end -->
"""


def cxx_function(name, lines):
    """A C++ function of exactly `lines` lines, signature to closing brace."""
    body = [f"  int v{i} = {i};" for i in range(lines - 3)]
    return "\n".join([f"int {name}(int x) {{", *body, "  return x;", "}"]) + "\n"


def write(root, path, text):
    full = os.path.join(root, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(text)


@pytest.fixture
def tree(tmp_path):
    """A tree that passes: reduce linking common only, every function at most 80 lines."""
    root = str(tmp_path)
    write(root, "docs/ARCHITECTURE.md", ARCHITECTURE)
    write(root, "runner/CMakeLists.txt", "target_link_libraries(opverify_verify PUBLIC opverify_common)\n")
    write(root, "reduce/CMakeLists.txt", "target_link_libraries(opverify_reduce PUBLIC opverify_common)\n")
    write(root, "runner/common/old.cc", cxx_function("Old", 80))
    return root


def check(root):
    proc = subprocess.run([sys.executable, CHECK, root], capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout


def test_the_planted_tree_passes(tree):
    assert check(tree) == (0, "")


def test_a_new_function_over_80_lines_fails(tree):
    write(tree, "reduce/fine.cc", cxx_function("Fine", 80))
    assert check(tree) == (0, "")
    write(tree, "reduce/long.cc", cxx_function("TooLong", 81))
    rc, out = check(tree)
    assert rc == 1
    assert "reduce/long.cc:1: TooLong is 81 lines; the most is 80" in out
    assert "Fine" not in out


def test_a_python_function_over_80_lines_fails(tree):
    body = "".join(f"    v{i} = {i}\n" for i in range(80))
    write(tree, "runner/verify/tool.py", "def handler(x):\n" + body)
    rc, out = check(tree)
    assert rc == 1 and "runner/verify/tool.py:1: handler is 81 lines" in out


def test_no_function_may_grow_past_80_lines(tree):
    write(tree, "runner/common/old.cc", cxx_function("Old", 81))
    rc, out = check(tree)
    assert rc == 1 and "runner/common/old.cc:1: Old is 81 lines; the most is 80: split it" in out


def test_braces_in_strings_comments_and_initialisers_do_not_end_a_function(tree):
    body = "".join(f"    v_{i} = {i};\n" for i in range(78))
    write(tree, "reduce/tricky.cc", (
        '#define OPEN {\n'
        'namespace x {\n'
        'struct Holder {\n'
        '  Holder(int a) : a_{a}, b_("}") {\n'
        '    const char* s = "}}}"; // }\n'
        '    const char* r = R"(}})";\n'
        '    auto f = [](int y) { return y; };\n'
        + body +
        '  }\n'
        '  int a_; const char* b_;\n'
        '};\n'
        '}  // namespace x\n'))
    rc, out = check(tree)
    assert rc == 1 and "reduce/tricky.cc:4: Holder is 83 lines; the most is 80" in out


def test_reduce_linking_verify_fails_directly_or_through_another(tree):
    write(tree, "reduce/CMakeLists.txt",
          "target_link_libraries(opverify_reduce PUBLIC opverify_middle)\n"
          "target_link_libraries(opverify_middle PRIVATE opverify_verify)\n")
    rc, out = check(tree)
    assert rc == 1 and "opverify_reduce links opverify_verify" in out


def test_an_include_up_a_floor_fails(tree):
    write(tree, "runner/verify/run.cc", '#include "reduce/model.h"\n')
    rc, out = check(tree)
    assert rc == 1 and "runner/verify/run.cc:1: includes reduce/model.h" in out
