#!/usr/bin/python3
"""Hostile inputs against the built programs: how many are handled.

Tries a few hundred bad inputs by category (manifests, command-line flags,
tensor files, operator files, run-folder state, hostile implementations)
against opverify, opverify-batch and opverify-reduce, and prints a table:
category, tried, handled, not handled, then every input not handled and why.

An input is handled when its program ends by itself within the time limit
with exit 0, 1, 2, 3 or 4, prints no traceback, no "terminate called" and no
sanitizer report, and, where it is refused (exit 2), says which file, field
or flag. Inputs that must be refused (a NaN timeout, a manifest that is a
FIFO) count as handled only with exit 2. A hostile implementation (a
<name>_torch.py with EXPECTED_ERROR_TYPE = "..." and a <name>_cpu_impl.py in
tests/fixtures/hostile/ or jobs/adversarial/) is handled when its run ends
with reports and every failure of the operator has the expected type.

  tools/hostile_inputs.py [--build DIR] [--quick] [--only CATEGORY] [--jobs N]

Exit 0 when every input is handled, 1 otherwise. --quick tries a sample of
each category (tens of inputs, seconds), as ctest's hostile_inputs.quick does.
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

from task_file import task_constants

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_OPS = os.path.join(ROOT, "tests", "fixtures", "cpu_ops")
HOSTILE_DIRS = [os.path.join(ROOT, "tests", "fixtures", "hostile"), os.path.join(ROOT, "jobs", "adversarial")]
BAD_OUTPUT = re.compile(r"Traceback \(most recent call last\)|terminate called|AddressSanitizer|"
                        r"runtime error:|Segmentation fault|core dumped|what\(\):")
# A hostile implementation's own traceback is its verdict's message, printed as such: for those
# runs only opverify's own failures count (an abort, a sanitizer report, a core dump).
OWN_FAILURE = re.compile(r"terminate called|AddressSanitizer|runtime error:|Segmentation fault|core dumped|what\(\):")
CLEAN_EXITS = (0, 1, 2, 3, 4)


class Case:
    """One hostile input: a command, what must be true of its end."""

    def __init__(self, category, label, argv, must_refuse=False, names=(), timeout=20, env=None, check=None,
                 refuse_codes=(2,), bad_output=BAD_OUTPUT):
        self.category, self.label, self.argv = category, label, argv
        self.bad_output = bad_output
        self.must_refuse = must_refuse  # one of refuse_codes required (exit 2: bad input)
        self.refuse_codes = refuse_codes  # opverify-reduce's 3: results lost, also a refusal
        self.names = names  # one of these must appear in the message of a refusal
        self.timeout, self.env, self.check = timeout, env, check


def run_case(case):
    """(handled, why) for one case."""
    env = dict(os.environ, **(case.env or {}))
    try:
        proc = subprocess.run(case.argv, capture_output=True, timeout=case.timeout, env=env,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return False, f"no end within {case.timeout} s"
    out = (proc.stdout + proc.stderr).decode("utf-8", "replace")
    if proc.returncode < 0 or proc.returncode not in CLEAN_EXITS:
        return False, f"exit {proc.returncode}: {last_line(out)}"
    if case.bad_output.search(out):
        return False, f"exit {proc.returncode} with: {case.bad_output.search(out).group(0)}: {last_line(out)}"
    if case.must_refuse and proc.returncode not in case.refuse_codes:
        codes = " or ".join(str(code) for code in case.refuse_codes)
        return False, f"accepted (exit {proc.returncode}), must be refused with exit {codes}"
    if proc.returncode in case.refuse_codes:
        message = out.strip()  # opverify lint reports on stdout, the others on stderr
        if not message:
            return False, "exit 2 without a message"
        if case.names and not any(name in message for name in case.names):
            return False, f"the message names none of {list(case.names)}: {last_line(message)}"
    if case.check:
        return case.check(proc, out)
    return True, ""


def last_line(text):
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return (lines[-1] if lines else "(no output)")[:160]


# ---- the inputs ---------------------------------------------------------------

class Scratch:
    """Files the cases use, in one temporary folder."""

    def __init__(self, root):
        self.root = root
        self.n = 0

    def path(self, name):
        self.n += 1
        folder = os.path.join(self.root, f"{self.n:04d}")
        os.makedirs(folder, exist_ok=True)
        return os.path.join(folder, name)

    def write(self, name, data):
        path = self.path(name)
        with open(path, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        return path

    def fifo(self, name):
        path = self.path(name)
        os.mkfifo(path)
        return path


def base_manifest():
    return {"name": "hostile", "defaults": {"impl_name": "cpu_impl", "lint": False, "bench": {"enabled": False}},
            "operators": [{"name": "relu_ok", "dir": CPU_OPS}]}


WRONG_VALUES = [("a string", "x"), ("a list", [1]), ("an object", {"a": 1}), ("null", None), ("true", True),
                ("-1", -1), ("0", 0), ("1e308", 1e308), ("-1e308", -1e308), ("2^63", 2 ** 63), ("2^64", 2 ** 64),
                ("1.5", 1.5), ("a long string", "x" * 5000)]
RAW_NUMBERS = ["1e400", "-1e400", "123456789012345678901234567890", "NaN", "Infinity", "-0", "1e-400"]
ENTRY_FIELDS = ["name", "dir", "impl_name", "non_compute", "standard", "precision_mode", "timeout_s",
                "warmup_timeout_s", "lint", "repeat", "seeds", "golden_precision", "edge_cases", "runtime_checks",
                "ghost_replay", "tags", "task_sha256", "sweep", "max_cases", "bench"]
ZERO_OK = {"warmup_timeout_s"}  # 0 is a value of these (no warm-up allowance), and so is -0 or 1e-400
BENCH_FIELDS = ["warmup", "repeats", "enabled", "adaptive", "target_rse", "max_repeats"]


def manifest_cases(s, batch):
    cases = []

    def add(label, text, must_refuse=True, names=None):
        path = s.write("job.json", text if isinstance(text, (str, bytes)) else json.dumps(text))
        argv = [batch, path, "--dry-run", "--run-dir", os.path.join(os.path.dirname(path), "run")]
        cases.append(Case("manifests", label, argv, must_refuse, names or (path,)))

    for field in ENTRY_FIELDS:
        for what, value in WRONG_VALUES:
            m = base_manifest()
            m["operators"][0][field] = value
            add(f"operators[0].{field} = {what}", m, must_refuse=None)
        for raw in RAW_NUMBERS:
            m = base_manifest()
            m["operators"][0][field] = "@RAW@"  # a number JSON allows and Python's json cannot write
            add(f"operators[0].{field} = {raw} (raw)", json.dumps(m).replace('"@RAW@"', raw),
                must_refuse=None if field in ZERO_OK and raw in ("-0", "1e-400") else True)
    for field in BENCH_FIELDS:
        for what, value in WRONG_VALUES + [("1e400", None)]:
            m = base_manifest()
            m["operators"][0]["bench"] = {field: value}
            text = json.dumps(m).replace("null", "1e400") if what == "1e400" else json.dumps(m)
            add(f"operators[0].bench.{field} = {what}", text, must_refuse=None)
    for top in ["name", "description", "include", "defaults", "operators", "max_job_cases"]:
        for what, value in WRONG_VALUES[:6]:
            m = base_manifest()
            m[top] = value
            add(f"{top} = {what}", m, must_refuse=None)
    good = json.dumps(base_manifest())
    for cut in range(1, len(good), max(1, len(good) // 12)):
        add(f"truncated at byte {cut}", good[:cut])
    rng = random.Random(17)
    for i in range(12):
        data = bytearray(good.encode())
        for _ in range(3):
            data[rng.randrange(len(data))] = rng.randrange(256)
        add(f"three random bytes changed (#{i})", bytes(data), must_refuse=None)
    specials = [
        ("empty file", ""), ("a UTF-8 BOM", "\ufeff" + good), ("invalid UTF-8", b'{"name": "\xff\xfe", "operators": []}'),
        ("nested 100000 deep", "[" * 100000 + "]" * 100000), ("nested 100000 deep in a field",
                                                               good[:-1] + ', "x": ' + "[" * 100000 + "]" * 100000 + "}"),
        ("a name of 300 characters", json.dumps({**base_manifest(), "operators": [{"name": "a" * 300, "dir": CPU_OPS}]})),
        ("a 200000-character name", json.dumps({**base_manifest(), "operators": [{"name": "a" * 200000, "dir": CPU_OPS}]})),
        ("a NUL in a name", json.dumps({**base_manifest(), "operators": [{"name": "relu\u0000ok", "dir": CPU_OPS}]})),
        ("a sweep of 6 keys x 20 values", json.dumps({**base_manifest(), "operators": [
            {"name": "add_sweep", "dir": CPU_OPS, "sweep": {k: list(range(20)) for k in "abcdef"}}]})),
        ("a sweep of 64 keys x 2 values", json.dumps({**base_manifest(), "operators": [
            {"name": "add_sweep", "dir": CPU_OPS, "sweep": {f"k{i}": [0, 1] for i in range(64)}}]})),
        ("a sweep value 1e400", good.replace('"dir":', '"sweep": {"n": [1e400]}, "dir":', 1)),
        ("an include of itself", None), ("an include of /dev/zero", json.dumps({**base_manifest(), "include": ["/dev/zero"]})),
        ("an include of a folder", json.dumps({**base_manifest(), "include": ["/"]})),
        ("a dir of /dev/null", json.dumps({**base_manifest(), "operators": [{"name": "relu_ok", "dir": "/dev/null"}]})),
        ("a glob of ../../../*_torch.py", json.dumps({**base_manifest(), "operators": [{"glob": "../../../../*_torch.py"}]})),
        ("a glob matching nothing", json.dumps({**base_manifest(), "operators": [{"glob": "/nonexistent/*_torch.py"}]})),
        ("duplicate keys", good[:-1] + ', "name": "again"}'),
        ("50 MB of spaces", " " * (50 << 20)),
    ]
    for label, text in specials:
        if text is None:
            path = s.path("job.json")
            with open(path, "w") as f:
                json.dump({**base_manifest(), "include": [os.path.basename(path)]}, f)
            cases.append(Case("manifests", label, [batch, path, "--dry-run"], True, (path,)))
            continue
        add(label, text, must_refuse=label not in ("a UTF-8 BOM", "duplicate keys"))
    for label, path in [("a FIFO", s.fifo("job.json")), ("/dev/zero", "/dev/zero"), ("a folder", ROOT),
                        ("a missing file", "/nonexistent/job.json"), ("/proc/self/mem", "/proc/self/mem")]:
        cases.append(Case("manifests", f"the manifest is {label}", [batch, path, "--dry-run"], True, (path,), timeout=10))
    # A field whose refusal is optional (a wrong type is always refused, some
    # values are fine): handled as long as the end is clean.
    for case in cases:
        if case.must_refuse is None:
            case.must_refuse = False
    return cases


NUMBERS_BAD = ["nan", "inf", "-inf", "1e400", "abc", "", "0x", "99999999999999999999999"]
NUMBERS_ODD = ["-1", "0", "1e308", "-0", "2147483648", "1e-320"]


def flag_cases(s, opverify, batch, reduce):
    cases = []
    manifest = s.write("job.json", json.dumps(base_manifest()))
    run = os.path.join(os.path.dirname(manifest), "run")
    batch_flags = ["--timeout", "--warmup-timeout", "--freq-check-interval", "--max-cases-per-item", "--max-cases",
                   "--max-job-cases"]
    for flag in batch_flags:
        for value in NUMBERS_BAD + NUMBERS_ODD:
            cases.append(Case("flags", f"opverify-batch {flag} {value!r}", [batch, manifest, "--dry-run", "--run-dir", run,
                                                                             flag, value],
                              must_refuse=value in NUMBERS_BAD, names=(flag,) if value in NUMBERS_BAD else ()))
    for value in ["5/2", "-1/2", "1/0", "a/b", "", "1/99999999999999"]:
        cases.append(Case("flags", f"opverify-batch --part {value!r}", [batch, manifest, "--dry-run", "--part", value],
                          must_refuse=True, names=("--part",)))
    for flag, value in [("--store", "everything"), ("--backend", "tpu"), ("--filter", "no_such_op*"),
                        ("--previous", "/nonexistent/run"), ("--previous", manifest), ("--unknown", "1")]:
        cases.append(Case("flags", f"opverify-batch {flag} {value}", [batch, manifest, "--dry-run", flag, value],
                          must_refuse=True, names=(flag, value)))
    verify = [opverify, "verify", "--op_name", "no_such_op", "--verify_dir", CPU_OPS, "--triton_impl_name", "cpu_impl"]
    for flag in ["--timeout", "--warmup-timeout", "--repeat", "--seeds", "--seed"]:
        for value in NUMBERS_BAD + NUMBERS_ODD:
            cases.append(Case("flags", f"opverify verify {flag} {value!r}", verify + [flag, value],
                              must_refuse=value in NUMBERS_BAD, names=(flag,) if value in NUMBERS_BAD else ()))
    for name in ["a" * 300, "../../etc/passwd", "x\ty", "-rf"]:
        cases.append(Case("flags", f"opverify verify --op_name {name[:20]!r}", [opverify, "verify", "--op_name", name,
                                                                               "--verify_dir", CPU_OPS]))
    bench = [opverify, "bench", "--op_name", "no_such_op", "--verify_dir", CPU_OPS, "--triton_impl_name", "cpu_impl"]
    for flag in ["--warmup", "--repeats", "--max-repeats", "--rse-target", "--timeout", "--framework_latency_ms",
                 "--drift-tolerance", "--profile-iterations", "--freq-check-interval"]:
        for value in NUMBERS_BAD + ["-1", "1e308"]:
            cases.append(Case("flags", f"opverify bench {flag} {value!r}", bench + [flag, value],
                              must_refuse=value in NUMBERS_BAD, names=(flag,) if value in NUMBERS_BAD else ()))
    good = s.write("g.npy", npy_bytes())
    for flag in ["--worst", "--threads"]:
        for value in NUMBERS_BAD + ["-1", "1e308", "2147483648"]:
            cases.append(Case("flags", f"opverify compare {flag} {value!r}",
                              [opverify, "compare", "--golden", good, "--actual", good, flag, value],
                              must_refuse=value in NUMBERS_BAD, names=(flag,) if value in NUMBERS_BAD else ()))
    for value in NUMBERS_BAD + ["-1"]:
        cases.append(Case("flags", f"opverify-reduce --perf-threshold {value!r}",
                          [reduce, run, "--perf-threshold", value], must_refuse=True,
                          names=("--perf-threshold", run)))
    return cases


def npy_bytes(shape=(2, 3), dtype="<f4"):
    import numpy
    import io
    buffer = io.BytesIO()
    numpy.save(buffer, numpy.arange(int(numpy.prod(shape)), dtype=dtype).reshape(shape))
    return buffer.getvalue()


def tensor_cases(s, opverify):
    cases = []
    good_bytes = npy_bytes()
    good = s.write("golden.npy", good_bytes)

    def compare(label, actual, must_refuse=False, names=None, timeout=20):
        cases.append(Case("tensor files", label, [opverify, "compare", "--golden", good, "--actual", actual],
                          must_refuse, names or (actual.split(":/")[0],), timeout=timeout))

    for cut in range(0, len(good_bytes), 6):
        compare(f".npy truncated to {cut} bytes", s.write("a.npy", good_bytes[:cut]), must_refuse=True)
    rng = random.Random(5)
    for i in range(40):
        data = bytearray(good_bytes)
        data[rng.randrange(128)] ^= 1 << rng.randrange(8)
        compare(f".npy header bit flip #{i}", s.write("a.npy", bytes(data)))
    for header in ["{'descr': '<f4', 'fortran_order': False, 'shape': (9223372036854775807, 2), }",
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }",
                   "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }",
                   "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                   "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
                   "{'descr': '<f4', 'fortran_order': False, 'shape': " + "(" * 1000 + ")" * 1000 + ", }",
                   "{'descr': '<f4', 'shape': (2,), }", "{}", "x" * 60000]:
        text = header.encode()
        raw = b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text + b"\0" * 8
        compare(f".npy header {header[:40]!r}", s.write("a.npy", raw), must_refuse=True)
    compare(".npy of another shape", s.write("a.npy", npy_bytes((3, 2))))
    compare(".npy of 2^29 zero-length rows", s.write("a.npy", npy_bytes((0, 536870912))))
    import h5py
    import numpy
    h5_path = s.path("t.h5")
    with h5py.File(h5_path, "w") as f:
        f.create_dataset("t", data=numpy.arange(6, dtype=numpy.float32).reshape(2, 3))
        f.create_group("g")
        f.create_dataset("big", shape=(1 << 20, 1 << 20, 1 << 10), dtype="f4", chunks=(1, 1, 16))
    h5_bytes = open(h5_path, "rb").read()
    compare("HDF5 dataset", h5_path + ":/t")
    compare("HDF5 missing dataset", h5_path + ":/nothing", must_refuse=True)
    compare("HDF5 group, not a dataset", h5_path + ":/g", must_refuse=True)
    compare("HDF5 dataset of 2^50 elements", h5_path + ":/big", must_refuse=True)
    for cut in [0, 8, 100, 512, 1000, len(h5_bytes) // 2, len(h5_bytes) - 10]:
        compare(f"HDF5 truncated to {cut} bytes", s.write("a.h5", h5_bytes[:cut]) + ":/t", must_refuse=True)
    for i in range(30):
        data = bytearray(h5_bytes)
        for _ in range(4):
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        compare(f"HDF5 bit flips #{i}", s.write("a.h5", bytes(data)) + ":/t")
    for label, path in [("a FIFO", s.fifo("a.npy")), ("/dev/zero", "/dev/zero"), ("a folder", ROOT),
                        ("a missing file", "/nonexistent/a.npy"), ("/proc/self/mem", "/proc/self/mem")]:
        compare(f"the .npy is {label}", path, must_refuse=True, timeout=10)
        compare(f"the .h5 is {label}", path + ":/t", must_refuse=True, timeout=10)
    return cases


def operator_file_cases(s, opverify):
    cases = []

    def lint(label, path, must_refuse=True):
        cases.append(Case("operator files", f"lint: {label}", [opverify, "lint", path], must_refuse, (path,), timeout=30))

    for label, path in [("a FIFO", s.fifo("x_triton_impl.py")), ("/dev/zero", "/dev/zero"), ("a folder", ROOT),
                        ("a missing file", "/nonexistent/x.py"), ("/proc/self/mem", "/proc/self/mem")]:
        lint(label, path)
    for label, text in [("binary garbage", bytes(range(256)) * 10), ("invalid UTF-8", b"x = '\xff'\n"),
                        ("a NUL byte", b"x = 1\0\n"), ("nested 100000 parentheses", "x = " + "(" * 100000 + ")" * 100000),
                        ("a 20 MB file", "# " + "x" * (20 << 20)), ("empty", ""),
                        ("a lone surrogate escape", "x = '\\ud800'\n"), ("deep nesting of 5000 lists", "x = " + "[" * 5000 + "]" * 5000)]:
        lint(label, s.write("x_triton_impl.py", text), must_refuse=label not in ("empty", "a lone surrogate escape"))
    # verify on an operator folder whose files are not plain files.
    for role in ["torch", "cpu_impl"]:
        folder = os.path.dirname(s.path("x"))
        for name in ["op_torch.py", "op_cpu_impl.py"]:
            if name == f"op_{role}.py":
                os.mkfifo(os.path.join(folder, name))
            else:
                shutil.copy(os.path.join(CPU_OPS, "relu_ok_" + name[3:]), os.path.join(folder, name))
        cases.append(Case("operator files", f"verify: the {role} file is a FIFO",
                          [opverify, "verify", "--op_name", "op", "--verify_dir", folder, "--triton_impl_name", "cpu_impl",
                           "--backend", "cpu", "--no-lint"], True, (folder,), timeout=60))
    return cases


def run_folder_cases(s, batch, reduce):
    cases = []
    manifest = s.write("job.json", json.dumps(base_manifest()))
    a_file = s.write("file", "x")
    run_cmd = [batch, manifest, "--backend", "cpu", "--no-bench", "--no-ab", "--timeout", "60"]
    for label, run_dir in [("a file", a_file), ("under /proc", "/proc/opverify_run"), ("under a file", a_file + "/run"),
                           ("a FIFO", s.fifo("run")), ("/dev/null", "/dev/null")]:
        cases.append(Case("run-folder state", f"batch --run-dir {label}", run_cmd + ["--run-dir", run_dir], True,
                          (run_dir,), timeout=120))
    empty = os.path.dirname(s.path("x"))
    cases.append(Case("run-folder state", "batch --resume of an empty folder", run_cmd + ["--run-dir", empty, "--resume"],
                      timeout=180))
    for label, prepare in [("a missing folder", None), ("a file", "file"), ("an empty folder", "empty"),
                           ("shards/ with garbage files", "garbage"), ("shards/ that is a file", "shards_file"),
                           ("a journal that is a folder", "journal_dir"),
                           ("a shard that crashes libhdf5", "crash_shard"), ("a shard that is a FIFO", "fifo_shard"),
                           ("a journal linked to /dev/zero", "journal_zero")]:
        folder = os.path.dirname(s.path("x")) + "/run"
        if prepare == "file":
            open(folder, "w").close()
        elif prepare:
            os.makedirs(folder)
            if prepare == "garbage":
                os.makedirs(folder + "/shards")
                for name in ["rank-0000.h5", "rank-0000.journal", "rank-0001.h5"]:
                    with open(f"{folder}/shards/{name}", "wb") as f:
                        f.write(os.urandom(3000))
            elif prepare == "shards_file":
                open(folder + "/shards", "w").close()
            elif prepare == "journal_dir":
                os.makedirs(folder + "/shards/rank-0000.journal")
            elif prepare in ("crash_shard", "fifo_shard", "journal_zero"):
                shards = folder + "/shards"
                os.makedirs(shards)
                if prepare == "journal_zero":
                    os.symlink("/dev/zero", shards + "/rank-0000.journal")
                else:
                    with open(shards + "/rank-0000.journal", "w") as f:
                        f.write('{"case_id": "x/#1", "shard": "rank-0000.h5", "n": 0}\n')
                if prepare == "crash_shard":
                    shutil.copy(os.path.join(ROOT, "tests", "fixtures", "corrupt_h5", "local-heap-crash.h5"),
                                shards + "/rank-0000.h5")
                elif prepare == "fifo_shard":
                    os.mkfifo(shards + "/rank-0000.h5")
        # Unreadable shards or journals are lost results: opverify-reduce's exit 3, naming them.
        lost = prepare in ("garbage", "journal_dir", "crash_shard", "fifo_shard", "journal_zero")
        cases.append(Case("run-folder state", f"reduce on {label}", [reduce, folder], prepare not in (None,), (folder,),
                          refuse_codes=(2, 3) if lost else (2,)))
        if prepare is None:
            cases[-1].must_refuse = True
    return cases


def hostile_fixtures():
    """(folder, name, expected error type) of every hostile implementation found."""
    found = []
    for folder in HOSTILE_DIRS:
        if not os.path.isdir(folder):
            continue
        for file in sorted(os.listdir(folder)):
            if not file.endswith("_torch.py"):
                continue
            name = file[:-len("_torch.py")]
            expected = task_constants(os.path.join(folder, file)).get("EXPECTED_ERROR_TYPE")
            if expected and os.path.isfile(os.path.join(folder, f"{name}_cpu_impl.py")):
                found.append((folder, name, expected))
    return found


def entry_settings(folder):
    """name -> the fields a manifest beside `folder` gives that operator
    (jobs/adversarial_cpu.json's fp64 golden, edge cases): what it is caught with."""
    settings = {}
    manifest = os.path.join(os.path.dirname(folder), os.path.basename(folder) + "_cpu.json")
    if os.path.isfile(manifest):
        for entry in json.load(open(manifest)).get("operators", []):
            if "name" in entry:
                settings[entry["name"]] = {k: v for k, v in entry.items() if k not in ("name", "dir")}
    return settings


def hostile_cases(s, batch):
    """One batch run per fixture: a killer must not take the others with it."""
    cases = []
    for folder, name, expected in hostile_fixtures():
        # The sandbox's own fixtures run under the limits they are written for
        # (tests/fixtures/hostile/README.md): 1 GiB of memory, a 1 MiB log, a
        # short case timeout for the flood.
        own = os.path.basename(folder) == "hostile"
        timeout_s = (8 if name == "flood" else 60) if own else 300
        entry = {"name": name, "dir": folder, "timeout_s": timeout_s, **entry_settings(folder).get(name, {})}
        manifest = s.write("job.json", json.dumps({**base_manifest(), "operators": [entry]}))
        run = os.path.join(os.path.dirname(manifest), "run")

        def check(proc, out, run=run, name=name, expected=expected):
            result_file = os.path.join(run, "ops", name, "verify_result.json")
            missing = [f for f in ("summary.json", "junit.xml") if not os.path.isfile(os.path.join(run, f))]
            if missing or not os.path.isfile(result_file):
                return False, f"exit {proc.returncode}, no reports ({', '.join(missing) or result_file}): {last_line(out)}"
            result = json.load(open(result_file))
            types = sorted({f["error_type"] for f in result.get("failures", [])})
            if types != [expected]:
                return False, f"error types {types}, expected [{expected!r}]"
            return True, ""
        cases.append(Case("hostile implementations", f"{os.path.relpath(folder, ROOT)}/{name} -> {expected}",
                          [batch, manifest, "--backend", "cpu", "--no-bench", "--no-ab", "--run-dir", run]
                          + (["--memory-limit", "1G", "--executor-log-cap", "1M"] if own else []),
                          timeout=900, check=check, env={"OPENBLAS_NUM_THREADS": "1"} if own else None,
                          bad_output=OWN_FAILURE))
    return cases


CATEGORIES = ["manifests", "flags", "tensor files", "operator files", "run-folder state", "hostile implementations"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build")))
    parser.add_argument("--quick", action="store_true", help="a sample of each category (for ctest)")
    parser.add_argument("--only", choices=CATEGORIES, action="append", help="these categories only")
    parser.add_argument("--jobs", type=int, default=max(1, min(4, os.cpu_count() or 1)))
    args = parser.parse_args()
    opverify = os.path.join(args.build, "runner", "opverify")
    batch = os.path.join(args.build, "runner", "opverify-batch")
    reduce = os.path.join(args.build, "reduce", "opverify-reduce")
    for program in (opverify, batch, reduce):
        if not os.access(program, os.X_OK):
            sys.exit(f"hostile_inputs: {program} is not built (--build names the build folder)")
    scratch_root = tempfile.mkdtemp(prefix="opverify_hostile_")
    s = Scratch(scratch_root)
    wanted = args.only or CATEGORIES
    cases = []
    makers = {"manifests": lambda: manifest_cases(s, batch), "flags": lambda: flag_cases(s, opverify, batch, reduce),
              "tensor files": lambda: tensor_cases(s, opverify), "operator files": lambda: operator_file_cases(s, opverify),
              "run-folder state": lambda: run_folder_cases(s, batch, reduce), "hostile implementations": lambda: hostile_cases(s, batch)}
    for category in wanted:
        made = makers[category]()
        if args.quick:
            rng = random.Random(1)
            slow = category in ("operator files", "run-folder state", "hostile implementations")
            made = rng.sample(made, min(len(made), 2 if slow else 25))
        cases.extend(made)
    try:
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(run_case, cases))
    finally:
        shutil.rmtree(scratch_root, ignore_errors=True)
    print(f"{'category':<26}{'tried':>7}{'handled':>9}{'not handled':>13}")
    failures = []
    for category in wanted:
        rows = [(c, o) for c, o in zip(cases, outcomes) if c.category == category]
        handled = sum(1 for _, (ok, _) in rows if ok)
        print(f"{category:<26}{len(rows):>7}{handled:>9}{len(rows) - handled:>13}")
        failures.extend((c, why) for c, (ok, why) in rows if not ok)
    total_handled = sum(1 for ok, _ in outcomes if ok)
    print(f"{'all':<26}{len(cases):>7}{total_handled:>9}{len(cases) - total_handled:>13}")
    if failures:
        print("\nnot handled:")
        for case, why in failures:
            print(f"  [{case.category}] {case.label}: {why}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
