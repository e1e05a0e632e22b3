"""Shared fixtures: where the built programs and module are (set by ctest)."""
import json
import os
import subprocess
import sys

import pytest

BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build"))
sys.path.insert(0, os.path.join(BUILD, "python"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "perf"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "runner", "executor"))  # opverify_runtime
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))  # task_file


@pytest.fixture(scope="session")
def opverify_bin():
    path = os.path.join(BUILD, "runner", "opverify")
    assert os.access(path, os.X_OK), f"build opverify first: {path} is missing"
    return path


class Run:
    def __init__(self, proc):
        self.returncode = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr

    def json(self):
        return json.loads(self.stdout)


@pytest.fixture
def compare(opverify_bin):
    """compare(golden, actual, *flags) runs `opverify compare` for real."""
    def run(golden, actual, *flags):
        proc = subprocess.run([opverify_bin, "compare", "--golden", str(golden), "--actual", str(actual), *flags],
                              capture_output=True, text=True, timeout=120)
        return Run(proc)
    return run


def processes_marked(mark):
    """Processes whose environment carries `mark` (every executor of one test inherits it)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if mark.encode() in f.read():
                    with open(f"/proc/{pid}/cmdline", "rb") as c:
                        found.append((int(pid), c.read().replace(b"\0", b" ").decode(errors="replace")))
        except OSError:
            continue
    return found
