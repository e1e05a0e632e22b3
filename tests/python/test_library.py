"""Operator libraries: the lint following an implementation's calls into declared packages
(read as source, never imported), --library/--python-path on verify, bench and lint, the
dispatch-override form end to end on the cpu backend (cases, inputs, the enable context
entered only for ModelNew, verdicts, an override never reached), the manifest generator,
and, with CUDA, the runtime evidence with a library package (tests/fixtures/library)."""
import json
import os
import subprocess
import sys
import types

import pytest

from opverify_runtime import lint

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "library")
STATIC = os.path.join(FIXTURES, "static")
IMPLS = os.path.join(STATIC, "impls")
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}


def lint_impl(name, **options):
    options.setdefault("library", ["fixlib"])
    options.setdefault("python_path", [STATIC])
    return lint.lint_file(os.path.join(IMPLS, name + "_impl.py"), **options)


def violations(result, rtype):
    return [v for check in result["checks"].values() if check["regression_type"] == rtype
            for v in check.get("violations", [])]


# ---- the static lint into the library ----------------------------------------------------

@pytest.mark.parametrize("name, kernels", [
    ("softmax_lib", ["_softmax_kernel"]),                 # from pkg.sub import f
    ("relu_scale_lib", ["_relu_kernel", "_scale_kernel"]),  # a class's method; Function.apply behind a wrapper
    ("row_sum_lib", ["_row_sum_kernel"]),                 # re-exported through the package's star import
])
def test_kernels_in_the_declared_library_count_as_the_implementations_own(name, kernels):
    result = lint_impl(name)
    assert result["valid"], result
    assert result["checks"]["kernel_called_from_forward"]["called"] == kernels
    where = result["checks"]["triton_kernel_exists"]["library_kernels"]
    assert all(where[k].startswith(os.path.join(STATIC, "fixlib", "ops")) for k in kernels)
    assert "fixlib" in result["library"]["packages"] and result["library"]["modules_read"]


def test_without_the_library_the_same_file_has_no_kernel():
    result = lint.lint_file(os.path.join(IMPLS, "softmax_lib_impl.py"))
    assert result["regression_type"] == 1


def test_a_library_submodule_named_like_the_operator_is_not_the_reference_module():
    """softmax_triton_impl.py imports fixlib.ops.softmax: the library's module, not the task file."""
    result = lint_impl("softmax_triton")
    assert result["valid"], result
    assert result["checks"]["no_reference_use"]["violations"] == []
    undeclared = lint.lint_file(os.path.join(IMPLS, "softmax_triton_impl.py"))  # the same import, no library
    assert [v["line"] for v in undeclared["checks"]["no_reference_use"]["violations"]] == [5, 6]
    for name, source in (("softmax", "from fixlib import softmax\n"), ("row_sum", "from fixlib import row_sum\n")):
        member = lint.lint_source(source, f"{name}_triton_impl.py", library=["fixlib"], python_path=[STATIC])
        assert member["checks"]["no_reference_use"]["passed"], (source, member)  # bound in fixlib, or star-imported
    for source in ("import softmax\n", "from softmax_torch import Model\n", "import fixlib.softmax_torch\n"):
        outside = lint.lint_source(source, "softmax_triton_impl.py", library=["fixlib", "softmax_torch"],
                                   python_path=[STATIC])
        assert outside["checks"]["no_reference_use"]["violations"], (source, outside)


def test_a_library_function_that_computes_in_torch_is_type_3_naming_the_library_file():
    result = lint_impl("gelu_fallback")  # launches a kernel, scales its output, then F.gelu two calls down
    assert result["regression_types"] == [3], result
    found = violations(result, 3)
    fallback = os.path.join(STATIC, "fixlib", "ops", "fallback.py")
    assert found == [{"line": 22, "call": "y * 0.5", "file": fallback,
                      "reason": "* on the tensor y (made here by a torch factory) computes in PyTorch",
                      "op": "Tensor.mul"},
                     {"line": 26, "call": "F.gelu", "file": fallback,
                      "reason": "torch.nn.functional.gelu is PyTorch compute (torch.nn.functional)",
                      "op": "torch.nn.functional.gelu"}]
    assert result["torch_ops"] == [
        {"op": "aten::mul", "name": "Tensor.mul", "line": 22, "file": fallback, "check": "no_forbidden_torch_ops",
         "source": "static"},
        {"op": "aten::gelu", "name": "torch.nn.functional.gelu", "line": 26, "file": fallback,
         "check": "no_forbidden_torch_ops", "source": "static"}]
    text = lint.format_text(result)
    assert os.path.join(STATIC, "fixlib", "ops", "fallback.py") + ":26: F.gelu" in text


def test_a_device_namespace_looked_up_by_the_device_type_in_the_library_is_not_a_dynamic_lookup():
    """fixlib.ops.device: `getattr(torch, dev.type, None)` used only as `with ns.device(dev):`,
    `ns is not None`, hasattr, `.synchronize()` (torch.cuda, torch.npu: Liger-Kernel's
    device_context) passes in library code."""
    result = lint_impl("softmax_device_lib")
    assert result["valid"], result
    assert result["checks"]["kernel_called_from_forward"]["called"] == ["_softmax_kernel"]
    assert "fixlib.ops.device" in result["library"]["modules_read"]


def test_other_dynamic_lookups_on_torch_in_the_library_stay_type_3():
    result = lint_impl("lookup_lib")  # getattr(torch, name)(x); the namespace returned to the caller
    found = {(v["line"], v["call"]) for v in result["checks"]["no_dynamic_lookup"]["violations"]}
    assert found == {(28, "getattr(torch, name)"), (34, "getattr(torch, tensor.device.type)")}, result
    assert all(v["file"] == os.path.join(STATIC, "fixlib", "ops", "device.py")
               for v in result["checks"]["no_dynamic_lookup"]["violations"])


def test_a_device_namespace_lookup_in_the_implementation_file_itself_stays_type_3():
    with open(os.path.join(STATIC, "fixlib", "ops", "device.py")) as f:
        helper = f.read().split("def wait_for")[0]
    source = helper + ("\n\nclass ModelNew(torch.nn.Module):\n    def forward(self, x):\n"
                       "        with on_device_of(x):\n            return x\n")
    result = lint.lint_source(source, "device_impl.py", library=["fixlib"], python_path=[STATIC])
    assert [v["call"] for v in result["checks"]["no_dynamic_lookup"]["violations"]] == ["getattr(torch, dev.type)"]


LOSS = os.path.join(STATIC, "fixlib", "ops", "loss.py")  # line 26: out.sum(), 28: out.mean(), 30: torch.mul


def loss_violations(call):
    source = ("import functools\nimport torch\nfrom fixlib.ops.loss import SquaredError, squared_error\n\n\n"
              "class ModelNew(torch.nn.Module):\n    reduction = 'none'\n\n    def forward(self, a, b):\n"
              f"        return {call}\n")
    result = lint.lint_source(source, "sq_error_impl.py", library=["fixlib"], python_path=[STATIC])
    assert result["checks"]["kernel_called_from_forward"]["called"] == ["_squared_error_kernel"], result
    return sorted(v["line"] for v in violations(result, 3) if v.get("file") == LOSS)


def test_branches_a_literal_argument_rules_out_are_not_reached():
    """fixlib.ops.loss.squared_error finishes "sum" and "mean" in torch; with "none", passed through
    autograd.Function.apply and a keyword, then mapped through a table of tl.constexpr modes,
    neither runs (Liger-Kernel's kl_div has this shape)."""
    result = lint_impl("sq_error_none")
    assert result["valid"], result
    assert loss_violations('squared_error(a, b, "none")') == []


@pytest.mark.parametrize("call, lines", [
    ("squared_error(a, b)", [28]),                                  # the default, "mean"
    ('squared_error(a, b, reduction="sum")', [26]),
    ('SquaredError.apply(a, b, "mean")', [28]),
    ('squared_error(a, b, "none", scale=2.0)', [30]),               # `scale is not None` decided too
    ("squared_error(a, b, self.reduction)", [26, 28]),             # not a literal: both branches
    ('squared_error(a, b, *("none",))', [26, 28, 30]),             # starred: no parameter is known
    ('functools.partial(squared_error, reduction="sum")(a, b)', [26, 28, 30]),  # a partial binds otherwise
    ('squared_error(a, b, **{"reduction": "none"})', [26, 28, 30]),
])
def test_branches_the_arguments_do_not_rule_out_are_still_reached(call, lines):
    assert loss_violations(call) == lines


KERNEL_FILE = """import functools

import torch
import triton
import triton.language as tl

MODES = {{"slow": 0, "fast": 1}}


@triton.jit
def _exp_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.exp(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)


def _launch(x):
    y = torch.empty_like(x)
    _exp_kernel[(triton.cdiv(x.numel(), 1024),)](x, y, x.numel(), BLOCK=1024)
    return y

{helper}

class ModelNew(torch.nn.Module):
    def forward(self, x):
        return {call}
"""


@pytest.mark.parametrize("helper, call, pruned", [
    ("def run(x, mode):\n    if mode == 'fast':\n        return torch.softmax(x, -1)\n    return _launch(x)",
     "run(x, 'slow')", True),
    ("def run(x, mode):\n    if mode != 'slow':\n        return torch.softmax(x, -1)\n    return _launch(x)",
     "run(x, mode='slow')", True),
    ("def run(x, mode='slow'):\n    if mode in ('fast', 'faster'):\n        return torch.softmax(x, -1)\n"
     "    return _launch(x)", "run(x)", True),
    ("def run(x, mode):\n    if MODES[mode] == 1:\n        return torch.softmax(x, -1)\n    return _launch(x)",
     "run(x, 'slow')", True),
    ("MODE = 'slow'\n\ndef run(x):\n    if MODE == 'fast':\n        return torch.softmax(x, -1)\n    return _launch(x)",
     "run(x)", True),                                                    # a module constant
    ("class Runner:\n    def run(self, x, mode):\n        return torch.softmax(x, -1) if mode == 'fast' else _launch(x)",
     "Runner().run(x, 'slow')", True),                             # a bound method: self is not the mode
    # the same tests where something else decides the branch: scanned
    ("def run(x, mode):\n    if mode == 'fast':\n        return torch.softmax(x, -1)\n    return _launch(x)",
     "run(x, 'fast')", False),
    ("def run(x, mode):\n    for _ in range(2):\n        if mode == 'fast':\n            return torch.softmax(x, -1)\n"
     "        mode = 'fast'\n    return _launch(x)", "run(x, 'slow')", False),       # reassigned in the loop
    ("def run(x, mode):\n    def flip():\n        nonlocal mode\n        mode = 'fast'\n    flip()\n"
     "    if mode == 'fast':\n        return torch.softmax(x, -1)\n    return _launch(x)", "run(x, 'slow')", False),
    ("def run(x, mode):\n    MODES['slow'] = 1\n    if MODES[mode] == 1:\n        return torch.softmax(x, -1)\n"
     "    return _launch(x)", "run(x, 'slow')", False),                 # the table is written to
    ("MODE = 'slow'\nMODE = 'fast'\n\ndef run(x):\n    if MODE == 'fast':\n        return torch.softmax(x, -1)\n"
     "    return _launch(x)", "run(x)", False),                         # bound twice: not a constant
    ("def run(x, mode):\n    if mode == 'fast':\n        return torch.softmax(x, -1)\n    return _launch(x)\n\n"
     "fast = run", "fast(x, 'slow')", True),                             # through an alias: run's own call
    ("def run(x, mode):\n    if mode == 'fast':\n        return torch.softmax(x, -1)\n    return _launch(x)\n\n"
     "fast = functools.partial(run, mode='fast')", "fast(x)", False),   # a partial binds its own
    ("MODE = 'slow'\n\ndef run(x):\n    if MODE == 'fast':\n        return torch.softmax(x, -1)\n    return _launch(x)\n\n"
     "run.__globals__['MODE'] = 'fast'", "run(x)", False),               # written by name: not a constant
    ("def run(x, mode):\n    if (mode := 'fast') == 'fast':\n        return torch.softmax(x, -1)\n"
     "    return _launch(x)", "run(x, 'slow')", False),
])
def test_the_implementation_files_own_branches(helper, call, pruned):
    result = lint.lint_source(KERNEL_FILE.format(helper=helper, call=call), "run_triton_impl.py")
    found = [v["call"] for v in violations(result, 3)]
    assert found == ([] if pruned else ["torch.softmax"]), (helper, call, result)


def test_a_library_function_that_is_torch_matmul_is_type_3():
    result = lint_impl("matmul_fallback")  # import pkg.sub as m; m.f(...)
    assert 3 in result["regression_types"]
    assert [v["call"] for v in violations(result, 3)] == ["torch.matmul"]


def test_a_library_placeholder_kernel_is_type_4():
    result = lint_impl("copy_lib")
    assert result["regression_types"] == [4]
    assert violations(result, 4)[0]["file"] == os.path.join(STATIC, "fixlib", "ops", "copyonly.py")


def test_the_library_is_read_never_imported():
    lint_impl("relu_scale_lib")
    assert "fixlib" not in sys.modules and not any(m.startswith("fixlib.") for m in sys.modules)


def test_an_override_lints_what_its_enable_callable_reaches():
    options = {"library": ["fixlib"], "python_path": [STATIC]}
    honest = lint.lint_entries(["fixlib.enable:enabled"], **options)
    assert honest["valid"], honest
    assert honest["checks"]["kernel_called_from_forward"]["called"] == ["_softmax_kernel"]
    assert "no implementation file" in honest["override"]["note"]
    cheat = lint.lint_entries(["fixlib.enable:enabled_cheat"], **options)  # torch.log in the registered function
    assert cheat["regression_types"] == [3]
    assert violations(cheat, 3)[0]["file"] == os.path.join(STATIC, "fixlib", "enable.py")
    hidden = lint.lint_entries(["fixlib.enable:nosuch"], **options)  # nothing to follow: the runtime decides
    assert hidden["valid"] and hidden["override"]["unresolved"] == ["fixlib.enable:nosuch"]
    assert hidden["override"]["unproven"] == [2]


def test_opverify_lint_takes_library_and_python_path(opverify_bin):
    impl = os.path.join(IMPLS, "relu_scale_lib_impl.py")
    ok = subprocess.run([opverify_bin, "lint", impl, "--library", "fixlib", "--python-path", STATIC, "--json"],
                        capture_output=True, text=True, timeout=120)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert json.loads(ok.stdout)["checks"]["kernel_called_from_forward"]["called"] == ["_relu_kernel", "_scale_kernel"]
    alone = subprocess.run([opverify_bin, "lint", impl], capture_output=True, text=True, timeout=120)
    assert alone.returncode == 1 and "regression type 1" in alone.stdout
    fallback = subprocess.run([opverify_bin, "lint", "--library", "fixlib", "--python-path", STATIC,
                               os.path.join(IMPLS, "gelu_fallback_impl.py")], capture_output=True, text=True, timeout=120)
    assert fallback.returncode == 1 and "fallback.py:26: F.gelu" in fallback.stdout


# ---- --library and --python-path on verify and bench --------------------------------------

CPU_LIB = os.path.join(FIXTURES, "cpu_lib")


def run_cli(opverify_bin, command, *flags):
    return subprocess.run([opverify_bin, command, "--op_name", "libscale", "--verify_dir",
                           os.path.join(CPU_LIB, "ops"), "--triton_impl_name", "cpu_impl", "--backend", "cpu",
                           *flags], capture_output=True, text=True, timeout=300)


def test_verify_and_bench_find_the_library_through_python_path(opverify_bin, tmp_path):
    out = tmp_path / "verify_result.json"
    verified = run_cli(opverify_bin, "verify", "--no-lint", "--library", "cpulib", "--python-path", CPU_LIB,
                       "--output", str(out))
    assert verified.returncode == 0, verified.stderr[-2000:]
    assert json.loads(out.read_text())["passed_cases"] == 1
    without = run_cli(opverify_bin, "verify", "--no-lint", "--output", str(tmp_path / "without.json"))
    assert without.returncode == 1
    assert "No module named 'cpulib'" in json.loads((tmp_path / "without.json").read_text())["failures"][0]["error_msg"]
    perf = tmp_path / "perf.json"
    benched = run_cli(opverify_bin, "bench", "--verify_not_required", "--library", "cpulib", "--python-path",
                      CPU_LIB, "--warmup", "1", "--repeats", "3", "--output", str(perf))
    assert benched.returncode == 0, benched.stderr[-2000:]
    assert perf.exists()


def test_a_declared_library_that_does_not_import_fails_the_load(opverify_bin, tmp_path):
    out = tmp_path / "verify_result.json"
    run = run_cli(opverify_bin, "verify", "--no-lint", "--library", "cpulib", "--library", "nosuch_lib",
                  "--python-path", CPU_LIB, "--output", str(out))
    assert run.returncode == 1
    failure = json.loads(out.read_text())["failures"][0]
    assert failure["error_type"] == "ImportError"
    assert "library 'nosuch_lib' (declared with library/--library) does not import" in failure["error_msg"]


# ---- dispatch-override operators on the cpu backend ---------------------------------------

@pytest.fixture(scope="module")
def override_run(tmp_path_factory):
    batch = os.path.join(BUILD, "runner", "opverify-batch")
    run_dir = tmp_path_factory.mktemp("override") / "run"
    proc = subprocess.run([batch, os.path.join(FIXTURES, "cpu_override.json"), "--backend", "cpu", "--run-dir",
                           str(run_dir)], capture_output=True, text=True, timeout=600,
                          env=dict(os.environ, **MPI_ENV))
    return proc, run_dir


def op_result(run_dir, op):
    return json.loads((run_dir / "ops" / op / "verify_result.json").read_text())


def test_override_operators_run_their_sweeps_and_pass_when_right(override_run):
    proc, run_dir = override_run
    assert proc.returncode == 1, proc.stderr[-3000:]  # two planted failures
    right = op_result(run_dir, "softmax_right")
    assert (right["total_cases"], right["passed_cases"]) == (8, 8)
    pair = op_result(run_dir, "softmax_pair")  # an enable/disable pair, a keyword argument, uniform inputs
    assert (pair["total_cases"], pair["passed_cases"]) == (2, 2)
    perf = json.loads((run_dir / "ops" / "softmax_right" / "perf_result.json").read_text())
    assert perf  # the benchmark phase times the call inside the context against the call alone


def test_a_wrong_override_fails_on_accuracy_so_the_golden_ran_outside_the_context(override_run):
    _, run_dir = override_run
    wrong = op_result(run_dir, "softmax_wrong")
    assert wrong["passed_cases"] == 0 and wrong["failures"][0]["error_type"] == "AccuracyError"


def test_override_check_reports_each_timed_shape_and_the_failures(override_run):
    # tools/override_check.py (the device's override-bench): each benchmarked shape's median, with
    # do_bench's beside it where there is one (cuda only: none here), and the failed cases.
    _, run_dir = override_run
    out = run_dir.parent / "check.json"
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "override_check.py"), "report", str(run_dir),
                           "--json", str(out)], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # no GhostReplayUnchanged
    report = json.loads(out.read_text())
    right = [row for row in report["shapes"] if row["op"] == "softmax_right"]
    assert len(right) == 8 and all(row["ours_ms"] > 0 and row["do_bench_ms"] is None for row in right), right
    assert not any(row["op"] == "softmax_wrong" for row in report["shapes"])  # failed: not benchmarked
    assert "softmax_wrong" in proc.stdout and "AccuracyError" in proc.stdout
    assert report["ghost_findings"] == {} and "0 ghost replays not judged" in proc.stdout


def test_override_check_shows_what_each_ghost_replay_skipped_and_what_got_through(tmp_path):
    """The ghost replay runs on cuda only; its two outcomes that tell a false failure's cause
    (GhostReplayUnchanged with the launches it skipped, and a replay not judged because own
    launches got through) are read from each operator's verify_result.json as the batch writes it."""
    ops = tmp_path / "run" / "ops"
    unchanged = ("ghost replay: with its @triton.jit kernels (abs_func_kernel_rank_1) made no-ops (4 launches "
                 "skipped), ModelNew.forward returned the same outputs bit for bit: the kernels do not make them")
    through = "ghost replay: not judged: own kernels launched although made no-ops (exp_func_kernel_rank_1): ..."
    results = {"abs": {"failures": [{"case_idx": 1, "error_type": "GhostReplayUnchanged", "error_msg": unchanged}],
                       "opverify": {"cases": [{"case_idx": 1, "warnings": []}]}},
               "exp": {"failures": [], "opverify": {"cases": [{"case_idx": 1, "warnings": [through]},
                                                              {"case_idx": 2, "warnings": ["other"]}]}},
               "add": {"failures": [], "opverify": {"cases": [{"case_idx": 1, "warnings": []}]}}}
    for op, result in results.items():
        (ops / op).mkdir(parents=True)
        (ops / op / "verify_result.json").write_text(json.dumps(result))
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    try:
        import override_check
    finally:
        sys.path.pop(0)
    (ops / "gelu").mkdir()
    (ops / "gelu" / "verify_result.json").write_text('{"failures": [{"error_type": "GhostRepl')  # cut mid-write
    assert override_check.ghost_findings(str(tmp_path / "run")) == {
        "abs": {"unchanged": [unchanged], "not_judged": []},
        "exp": {"unchanged": [], "not_judged": [through]}}
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "override_check.py"), "report",
                           str(tmp_path / "run")], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 1 and "cannot read" in proc.stderr  # no junit.xml: reported all the same
    assert "gelu/verify_result.json left out" in proc.stderr, proc.stderr
    assert "abs unchanged (1): " + unchanged in proc.stdout and "exp not_judged (1): " + through in proc.stdout


def test_override_check_prepares_the_named_operators_with_bench_and_ghost_replay(tmp_path):
    import shutil
    job = tmp_path / "cpu_override.json"
    shutil.copy(os.path.join(FIXTURES, "cpu_override.json"), job)
    tool = os.path.join(ROOT, "tools", "override_check.py")
    proc = subprocess.run([sys.executable, tool, "prepare", str(job), str(tmp_path / "_check.json"),
                           "--ops", "softmax_pair,softmax_right"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    check = json.loads((tmp_path / "_check.json").read_text())
    assert [o["name"] for o in check["operators"]] == ["softmax_pair", "softmax_right"]
    assert check["defaults"]["ghost_replay"] is True and check["defaults"]["bench"]["enabled"] is True
    assert check["defaults"]["bench"]["repeats"] == 5 and check["defaults"]["seeds"] == 1
    alone = subprocess.run([sys.executable, tool, "prepare", str(job), str(tmp_path / "_bench.json"),
                            "--ops", "softmax_pair", "--no-ghost"], capture_output=True, text=True, timeout=60)
    assert alone.returncode == 0, alone.stderr
    bench_alone = json.loads((tmp_path / "_bench.json").read_text())["defaults"]
    assert bench_alone["ghost_replay"] is False and bench_alone["bench"]["enabled"] is True
    missing = subprocess.run([sys.executable, tool, "prepare", str(job), str(tmp_path / "_x.json"), "--ops", "nosuch"],
                             capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "has no operator nosuch" in missing.stderr
    elsewhere = subprocess.run([sys.executable, tool, "prepare", str(job), str(tmp_path / "sub" / "_x.json"),
                                "--ops", "softmax_pair"], capture_output=True, text=True, timeout=60)
    assert elsewhere.returncode != 0 and "must be beside" in elsewhere.stderr


def test_an_override_never_reached_fails_type_2(override_run):
    _, run_dir = override_run
    unreached = op_result(run_dir, "softmax_unreached")
    failure = unreached["failures"][0]
    assert failure["error_type"] == "LintError"
    assert "registered but never reached" in failure["error_msg"]
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["totals"]["operators"] == 5
    composite = op_result(run_dir, "isclose_composite")  # an override of a composite op: reached, right
    assert (composite["total_cases"], composite["passed_cases"]) == (1, 1), composite


def test_the_enable_context_is_entered_only_around_modelnews_call():
    """In process: the executor's Session on an override, the library's own record of when
    its context is active, and the reference's calls watched."""
    from opverify_runtime.executor import Session
    sys.path.insert(0, os.path.join(FIXTURES, "cpu_override"))
    try:
        import ovlib
        session = Session()
        spec = {"op": "torch.softmax", "enable": "ovlib:enabled",
                "args": [{"shape": ["$rows", 5], "dtype": "$dtype"}, -1]}
        reply, _ = session.handle_json(json.dumps({
            "op": "load", "task_file": "", "impl_file": "", "backend": "cpu", "seed": 5, "runtime_checks": True,
            "params": [{"rows": 3, "dtype": "float64"}], "library": ["ovlib"], "python_path": [], "override": spec}))
        assert json.loads(reply)["ok"] and json.loads(reply)["case_count"] == 1
        seen_by_model = []
        forward = session.task.Model.forward
        session.task.Model.forward = lambda self, *a: (seen_by_model.append(list(ovlib.ACTIVE)), forward(self, *a))[1]
        before = len(ovlib.ENTERED)
        answers = []
        for seed in (1, 2, 1):
            reply, tensors = session.handle_json(json.dumps({"op": "run_case", "index": 0, "seed": seed,
                                                             "probe": False, "evidence": True}))
            reply = json.loads(reply)
            assert reply["ok"], reply
            assert reply["input_desc"][0] == {"type": "tensor", "shape": [3, 5], "dtype": "torch.float64"}
            golden, actual = tensors
            assert (golden - actual).abs().max() < 1e-12
            answers.append(golden)
        assert ovlib.ENTERED[before:] == ["right"] * 3  # once per ModelNew call
        assert seen_by_model == [[]] * 3 and ovlib.ACTIVE == []  # the reference never inside it
        assert (answers[0] == answers[2]).all() and not (answers[0] == answers[1]).all()  # seeded per case
    finally:
        sys.path.remove(os.path.join(FIXTURES, "cpu_override"))


def test_the_reach_check_follows_runtime_checks_not_the_lint():
    """runtime_checks is the reach check's switch: off, an unreached override passes (ATen's
    answer is right); on, it fails whatever the lint setting (the executor is never told it)."""
    from opverify_runtime.executor import Session
    sys.path.insert(0, os.path.join(FIXTURES, "cpu_override"))
    try:
        spec = {"op": "torch.softmax", "enable": "ovlib:enabled_unreached", "args": [{"shape": [2, 8]}, -1]}
        outcomes = {}
        for checks in (False, True):
            session = Session()
            reply, _ = session.handle_json(json.dumps({
                "op": "load", "task_file": "", "impl_file": "", "backend": "cpu", "seed": 0, "runtime_checks": checks,
                "library": ["ovlib"], "python_path": [], "override": spec}))
            assert json.loads(reply)["ok"]
            reply, _ = session.handle_json(json.dumps({"op": "run_case", "index": 0, "seed": 0, "evidence": True}))
            outcomes[checks] = json.loads(reply)
        assert outcomes[False]["ok"]
        assert not outcomes[True]["ok"] and outcomes[True]["regression_type"] == 2
    finally:
        sys.path.remove(os.path.join(FIXTURES, "cpu_override"))


# ---- tools/override_manifest.py -----------------------------------------------------------

TOOL = os.path.join(ROOT, "tools", "override_manifest.py")


def test_the_generator_writes_a_manifest_the_batch_accepts(tmp_path):
    ops = tmp_path / "ops.txt"
    ops.write_text("# name | op | args | sweep\n"
                   "softmax | torch.softmax | T[$rows,$cols] -1 | rows=1,7 cols=16,33 dtype=float32,float64\n"
                   "gelu | torch.nn.functional.gelu | T[$n] approximate=\"tanh\" | n=4,9\n"
                   "where | torch.where | T[$n]:bool T[$n] T[$n]:uniform(-1,1) | n=16\n")
    manifest = tmp_path / "jobs.json"
    made = subprocess.run([sys.executable, TOOL, str(ops), "--library", "ovlib", "--python-path",
                           os.path.join(FIXTURES, "cpu_override"), "--enable", "ovlib:enabled", "-o", str(manifest)],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    job = json.loads(manifest.read_text())
    assert [op["name"] for op in job["operators"]] == ["softmax", "gelu", "where"]
    assert job["operators"][2]["override"]["args"][0] == {"shape": ["$n"], "init": "bool"}
    assert job["operators"][1]["override"]["kwargs"] == {"approximate": "tanh"}
    assert len(manifest.read_text().splitlines()) == 7 + 3  # one line per operator
    dry = subprocess.run([os.path.join(BUILD, "runner", "opverify-batch"), str(manifest), "--dry-run",
                          "--backend", "cpu", "--run-dir", str(tmp_path / "run")],
                         capture_output=True, text=True, timeout=60, env=dict(os.environ, **MPI_ENV))
    assert dry.returncode == 0, dry.stdout + dry.stderr
    assert dry.stdout.startswith("3 operators")
    assert "softmax (8 sweep cases)" in dry.stdout and "gelu (2 sweep cases)" in dry.stdout


def test_the_generator_writes_tensor_lists_whole_shape_sweeps_and_tags(tmp_path):
    """FlagGems' cat, stack and index take lists of tensors; its test shapes have different ranks
    (a string parameter, "20x320x15", is a whole shape); a fifth column tags an entry."""
    import torch
    from opverify_runtime import override
    ops = tmp_path / "ops.txt"
    ops.write_text("cat | torch.cat | [T[16,$n],T[7,$n]] 0 | n=256 dtype=float16\n"
                   "index | torch.ops.aten.index.Tensor | T[64,8] [T[5]:int64:randint(0,64)] |\n"
                   "abs | torch.abs | T[$shape] | shape=1024x1024,20x320x15 | library-defect\n"
                   "ln | torch.nn.functional.layer_norm | T[4,$c] [$c] | c=8\n")
    out = tmp_path / "ops.json"
    proc = subprocess.run([sys.executable, TOOL, str(ops), "--library", "x", "--enable", "x:on", "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    entries = {e["name"]: e for e in json.loads(out.read_text())["operators"]}
    assert entries["cat"]["override"]["args"] == [[{"shape": [16, "$n"], "dtype": "$dtype"},
                                                   {"shape": [7, "$n"], "dtype": "$dtype"}], 0]
    assert entries["index"]["override"]["args"][1] == [{"shape": [5], "init": "randint", "low": 0, "high": 64,
                                                        "dtype": "int64"}]
    assert entries["abs"]["sweep"]["shape"] == ["1024x1024", "20x320x15"] and entries["abs"]["tags"] == ["library-defect"]
    assert entries["ln"]["override"]["args"][1] == ["$c"] and "tags" not in entries["ln"]
    # what the executor makes of them
    params = {"n": 256, "dtype": "float16"}
    made = override.make_value(entries["cat"]["override"]["args"][0], params, torch)
    assert [list(t.shape) for t in made] == [[16, 256], [7, 256]] and made[0].dtype == torch.float16
    shape = entries["abs"]["override"]["args"][0]
    assert list(override.make_tensor(shape, {"shape": "20x320x15"}, torch).shape) == [20, 320, 15]
    assert list(override.make_tensor(shape, {"shape": ""}, torch).shape) == []
    with pytest.raises(Exception, match="dimensions joined by x"):
        override.make_tensor(shape, {"shape": "20 by 3"}, torch)


def test_the_flaggems_manifest_is_the_one_its_op_list_writes(tmp_path):
    """jobs/flaggems_override.json is generated: from jobs/flaggems/ops.txt by the command at the
    list's top (an edit of the JSON alone would be lost the next time it is written)."""
    ops = os.path.join(ROOT, "jobs", "flaggems", "ops.txt")
    out = tmp_path / "flaggems_override.json"
    proc = subprocess.run([sys.executable, TOOL, ops, "--library", "flag_gems", "--enable", "flag_gems:use_gems",
                           "--python-path", "flaggems/src", "--python-path", "flaggems/adapter", "--name",
                           "flaggems_override", "--defaults", '{"seeds": 3, "lint": true, "runtime_checks": true, '
                           '"timeout_s": 600, "bench": {"enabled": false}}', "-o", str(out)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    written = json.loads(out.read_text())
    written["description"] = written["description"].replace(ops, "jobs/flaggems/ops.txt")
    with open(os.path.join(ROOT, "jobs", "flaggems_override.json")) as f:
        assert json.load(f) == written
    with open(ops) as f:
        assert "tools/override_manifest.py jobs/flaggems/ops.txt --library flag_gems" in f.read()


def test_the_generator_names_the_bad_line(tmp_path):
    ops = tmp_path / "ops.txt"
    ops.write_text("softmax | torch.softmax | T[$rows] -1 | cols=3\n")
    made = subprocess.run([sys.executable, TOOL, str(ops), "--library", "x", "--enable", "x:on"],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 2 and f"{ops}:1: $rows names no sweep parameter" in made.stderr


def test_the_generator_says_whether_the_opinfo_database_is_there(tmp_path):
    check = subprocess.run([sys.executable, TOOL, "--check-opinfo"], capture_output=True, text=True, timeout=120)
    try:
        import expecttest  # noqa: F401
    except ImportError:
        assert check.returncode == 1
        assert "not available" in check.stdout and "expecttest, which is not installed" in check.stdout
        ops = tmp_path / "ops.txt"
        ops.write_text("addmm | torch.addmm | @opinfo\n")
        drawn = subprocess.run([sys.executable, TOOL, str(ops), "--opinfo", "--library", "x", "--enable", "x:on"],
                               capture_output=True, text=True, timeout=120)
        assert drawn.returncode == 2 and "the OpInfo database is not available" in drawn.stderr
    else:
        assert check.returncode == 0 and check.stdout.startswith("available")


# ---- the runtime evidence's judgement, on recorded evidence (no device needed) --------------

class RecordedTrace:
    def __init__(self, compute):
        self._compute = {name: [calls, {"cuda"}] for name, calls in compute.items()}

    def compute_ops(self):
        return self._compute


def test_library_kernels_are_own_kernels(monkeypatch):
    import types
    from opverify_runtime import runtime_evidence

    class JITFunction:  # what the evidence recognises a Triton kernel by
        def __init__(self, fn):
            self.fn = fn
    modules = {}
    for name in ("fakelib", "fakelib.ops", "otherlib"):
        module = types.ModuleType(name)
        kernel = types.FunctionType((lambda: None).__code__, {}, name.replace(".", "_") + "_kernel")
        kernel.__module__ = name
        module.kernel = JITFunction(kernel)
        modules[name] = module
        monkeypatch.setitem(sys.modules, name, module)
    modules["fakelib"].imported = JITFunction(modules["otherlib"].kernel.fn)  # imported, not defined there
    impl = types.ModuleType("impl")
    assert sorted(runtime_evidence.own_kernels(impl, ["fakelib"])) == ["fakelib_kernel", "fakelib_ops_kernel"]
    assert runtime_evidence.own_kernels(impl) == {}


def test_override_evidence_against_the_aten_baseline():
    from opverify_runtime.runtime_evidence import judge_evidence
    aten = "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float, float>(float*, float const*, int)"
    copy = "void at::native::unrolled_elementwise_kernel<at::native::direct_copy_kernel_cuda(...)>"
    exp = "void at::native::vectorized_elementwise_kernel<4, at::native::exp_kernel_cuda(...)>"
    baseline = ({"_softmax"}, {aten})
    own = {"_softmax_kernel"}
    assert judge_evidence(RecordedTrace({"_softmax": 1}), {"_softmax_kernel": (1, 9.0), copy: (1, 50.0)}, own,
                          baseline) is None  # a cast around the library's kernel is fine
    unreached = judge_evidence(RecordedTrace({"_softmax": 1}), {aten: (1, 9.0)}, own, baseline)
    assert unreached[0] == 2 and "the override is not reached" in unreached[1] and "cunn_SoftMaxForward" in unreached[1]
    beside = judge_evidence(RecordedTrace({"_softmax": 1}), {"_softmax_kernel": (1, 9.0), aten: (1, 1.0)}, own,
                            baseline)
    assert beside[0] == 3 and "ATen's own kernels" in beside[1]
    fallback = judge_evidence(RecordedTrace({"_softmax": 1}), {"_softmax_kernel": (1, 1.0), exp: (1, 20.0)}, own,
                              baseline)  # torch compute below the trace: only the profile sees it
    assert fallback[0] == 3 and "not the library's" in fallback[1]
    extra = judge_evidence(RecordedTrace({"_softmax": 1, "mm": 1}), {"_softmax_kernel": (1, 9.0)}, own, baseline)
    assert extra[0] == 3 and "aten::mm" in extra[1]


def test_an_override_of_a_composite_op_is_seen_registered_by_the_library():
    """aten::isclose is CompositeImplicitAutograd: outside the context the call dispatches its
    decomposition, inside it isclose itself, to the library's CPU kernel. The trace records that
    isclose had a kernel for its key there and has none once the context is left."""
    import torch
    from opverify_runtime import override
    from opverify_runtime.runtime_evidence import DispatchTrace
    sys.path.insert(0, os.path.join(FIXTURES, "cpu_override"))
    try:
        import ovlib
        a, b = torch.randn(3, 8, dtype=torch.float64), torch.randn(3, 8, dtype=torch.float64)
        with DispatchTrace(torch, probe_kernels=True) as outside:
            torch.isclose(a, b, 0.5, 0.5)
        assert "isclose" not in outside.ops and {"abs", "le"} <= set(outside.ops)
        inside = {}
        impl = override.build_impl({"op": "torch.isclose", "enable": "ovlib:enabled_isclose"},
                                   types.SimpleNamespace(call=lambda inputs: torch.isclose(*inputs, 0.5, 0.5)), torch)
        model = impl.ModelNew()
        model.trace_inside = (DispatchTrace, inside)
        with DispatchTrace(torch, probe_kernels=True) as trace:
            model(a, b)
        assert "isclose" in trace.ops and trace.registered_ops(torch) == {"isclose"}
        assert outside.registered_ops(torch) == set()
        # the registered kernel was wrapped while the context was entered: what it ran is traced
        assert {"abs", "le", "sub"} <= set(inside["isclose"]) and inside["isclose"]["abs"][1] == {"cpu"}
        model.trace_inside = None
        inside.clear()
        model(a, b)
        assert inside == {}  # not traced when the evidence does not watch
    finally:
        sys.path.remove(os.path.join(FIXTURES, "cpu_override"))


def test_the_op_the_library_registered_is_not_extra_compute():
    from opverify_runtime.runtime_evidence import judge_evidence, registered_during
    seen = {("aten::isclose", "CUDA"): ("isclose", True), ("aten::abs", "CUDA"): ("abs", True),
            ("aten::mm", "CUDA"): ("mm", False)}
    now = {("aten::isclose", "CUDA"): False, ("aten::abs", "CUDA"): True, ("aten::mm", "CUDA"): False}
    assert registered_during(seen, lambda name, key: now[(name, key)]) == {"isclose"}
    assert registered_during(seen, lambda name, key: 1 / 0) == set()  # unanswerable: still counted
    baseline = ({"eq", "abs", "mul", "add", "le", "sub", "ne", "bitwise_and_", "bitwise_or_"},
                {"void at::native::vectorized_elementwise_kernel<4, at::native::AbsFunctor<float>>"})
    kernels = {"_isclose_kernel": (1, 5.0)}
    own = {"_isclose_kernel"}
    before = judge_evidence(RecordedTrace({"isclose": 1}), kernels, own, baseline)  # the old false failure
    assert before[0] == 3 and "aten::isclose (1x)" in before[1]
    assert judge_evidence(RecordedTrace({"isclose": 1}), kernels, own, baseline, registered={"isclose"}) is None
    extra = judge_evidence(RecordedTrace({"isclose": 1, "mm": 1}), kernels, own, baseline, registered={"isclose"})
    assert extra[0] == 3 and "aten::mm" in extra[1] and "aten::isclose" not in extra[1]


def test_torch_compute_inside_the_librarys_registered_kernel_is_type_3():
    """The decoy: the registered _softmax computes with ATen (amax, exp, sum, div) and copies the
    result through a library kernel that outweighs them; the caller's trace sees only _softmax."""
    from opverify_runtime.runtime_evidence import judge_evidence, judge_inside_kernels
    baseline = ({"_softmax"}, {"void at::native::cunn_SoftMaxForward<4, float, float, float>(...)"})
    own = {"_copy_kernel"}
    kernels = {"_copy_kernel": (1, 50.0), "void at::native::reduce_kernel<...MaxOps...>": (1, 3.0)}
    decoy = {"_softmax": {"_to_copy": [1, {"cuda"}], "amax": [1, {"cuda"}], "sub": [1, {"cuda"}],
                          "exp": [1, {"cuda"}], "sum": [1, {"cuda"}], "div": [1, {"cuda"}]}}
    assert judge_evidence(RecordedTrace({"_softmax": 1}), kernels, own, baseline) is None  # the hole
    verdict = judge_evidence(RecordedTrace({"_softmax": 1}), kernels, own, baseline, inside=decoy)
    assert verdict[0] == 3 and "aten::_softmax: aten::amax (1x), aten::div (1x), aten::exp (1x)" in verdict[1]
    assert "_to_copy" not in verdict[1]
    honest = {"_softmax": {"empty_like": [1, {"cuda"}], "_to_copy": [2, {"cuda"}], "contiguous": [1, {"cuda"}]}}
    assert judge_inside_kernels(honest) is None  # allocation, casts, views: not compute
    assert judge_inside_kernels({"_softmax": {"amax": [1, {"cpu"}]}}) is None  # host bookkeeping only
    nested = {"_softmax": {"sum": [1, {"cuda"}]}, "sum.dim_IntList": {"empty": [1, {"cuda"}]}}
    assert judge_inside_kernels(nested) is None  # sum ran the library's own registered kernel


def test_library_backed_evidence_still_fails_torch_compute():
    from opverify_runtime.runtime_evidence import judge_evidence
    own = {"_softmax_kernel"}
    assert judge_evidence(RecordedTrace({}), {"_softmax_kernel": (1, 9.0)}, own) is None
    assert judge_evidence(RecordedTrace({"matmul": 1}), {"_softmax_kernel": (1, 9.0)}, own)[0] == 3
    missing = judge_evidence(RecordedTrace({}), {"other": (1, 9.0)}, own)
    assert missing[0] == 2 and "the file's and its library's" in missing[1]


# ---- cuda: the runtime evidence with a library package ------------------------------------

def cuda_available():
    try:
        import torch
        return torch.cuda.is_available()
    except ImportError:
        return False


@pytest.mark.skipif(not cuda_available(), reason="needs a CUDA device")
def test_runtime_evidence_with_a_library_on_cuda(tmp_path):
    batch = os.path.join(BUILD, "runner", "opverify-batch")
    run_dir = tmp_path / "run"
    proc = subprocess.run([batch, os.path.join(FIXTURES, "cuda_library.json"), "--backend", "cuda", "--run-dir",
                           str(run_dir), "--no-bench"], capture_output=True, text=True, timeout=900,
                          env=dict(os.environ, **MPI_ENV))
    report = {}
    for op in sorted(os.listdir(run_dir / "ops")):
        result = op_result(run_dir, op)
        report[op] = {"passed": result["passed_cases"], "total": result["total_cases"],
                      "failures": [(f["error_type"], f.get("regression_type"), f["error_msg"])
                                   for f in result["failures"][:1]]}
    print(json.dumps(report, indent=1))
    assert proc.returncode == 1, proc.stderr[-3000:]
    for honest in ("lsoftmax", "lsoftmax_nolint", "ov_softmax"):
        assert report[honest]["passed"] == report[honest]["total"] == 4, report[honest]
    expected = {"lsoftmax_fallback": (3, "torch.exp is PyTorch compute"),  # the static lint, into gpulib
                "lsoftmax_fallback_nolint": (3, "runtime type 3: ModelNew.forward ran PyTorch compute"),
                "ov_softmax_fallback": (3, "torch.exp is PyTorch compute"),
                # its registration is made inside the context: what it runs is traced
                "ov_softmax_fallback_nolint": (3, "runtime type 3: the library's registered kernels computed with "
                                                  "PyTorch operators inside them"),
                "ov_softmax_unreached": (2, "runtime type 2: the override is registered but never reached")}
    for op, (rtype, words) in expected.items():
        assert report[op]["passed"] == 0, report[op]
        error_type, regression_type, message = report[op]["failures"][0]
        assert (error_type, regression_type) == ("LintError", rtype) and words in message, (op, message[:600])


def test_isclose_rounding_names_the_rounding_of_this_torchs_isclose():
    """tools/isclose_rounding.py (docs/LIBRARIES.md, the tenth run): of its four emulations of
    where isclose's tolerances are rounded, one matches this torch's CPU isclose to the element
    in float16 and bfloat16 (torch 1.13: both rounded to the dtype; torch 2.11, on the device:
    atol alone), and in float32 rounding changes nothing, so all four do."""
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "isclose_rounding.py"), "--seeds", "1"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    for dtype in ("float16", "bfloat16"):
        counts = result["dtypes"][dtype]["differ_from_cpu_golden"]
        exact = [mode for mode in ("opmath", "atol_dt", "rtol_dt", "both_dt") if counts[mode] == 0]
        assert exact, (dtype, counts)
        assert any(counts[mode] > 0 for mode in counts), (dtype, counts)  # the inputs sit on the boundary
    assert set(result["dtypes"]["float32"]["differ_from_cpu_golden"].values()) == {0}


def test_tag_check_reads_a_night_against_the_job_files_tags(tmp_path):
    """tools/tag_check.py: an untagged failure is unexplained, a declared failure that failed
    with another error type is unexplained, one whose cases all passed is missed, and a tagged
    operator whose cases all passed is stale (exit 1 for each); a tagged failure, a declared
    failure (an expect: tag, or its task file's EXPECTED_ERROR_TYPE), a pass and an operator with
    no case are not; a stream's cut last line and its error lines are skipped, and a case seen
    in two streams counts as its last line."""
    job = tmp_path / "lib.json"
    (tmp_path / "tasks").mkdir()
    for name, declared in (("filed", "AccuracyError"), ("uncaught", "LintError"), ("honest", None)):
        (tmp_path / "tasks" / f"{name}_torch.py").write_text(
            "import torch\n" + (f"EXPECTED_ERROR_TYPE = {declared!r}\n" if declared else ""))
    job.write_text(json.dumps({"name": "lib", "operators": [
        {"name": "ok"}, {"name": "defect", "tags": ["lib", "library-defect"]},
        {"name": "fixed", "tags": ["reference-suspect"]}, {"name": "ours"},
        {"name": "planted", "tags": ["expect:LintError"]}, {"name": "later"}, {"name": "rerun"},
        {"name": "filed", "dir": "tasks"}, {"name": "uncaught", "dir": "tasks"},
        {"name": "misfiled", "tags": ["expect:LintError"]}, {"name": "honest", "dir": "tasks"}]}))

    def line(op, n, verdict, error=None, message=None):
        return json.dumps({"case_id": f"{op}/#{n}", "op": op, "verdict": verdict, "error_type": error,
                           "message": message})
    night = tmp_path / "night.jsonl"
    night.write_text("\n".join([
        line("ok", 1, "passed"), line("ok", 2, "waived"), line("defect", 1, "failed", "AccuracyError", "x"),
        line("defect", 2, "passed"), line("fixed", 1, "passed"),
        line("ours", 1, "failed", "RuntimeError", "opverify broke it"), line("planted", 1, "failed", "LintError"),
        line("rerun", 1, "failed", "Timeout", "slow"), line("filed", 1, "failed", "AccuracyError"),
        line("filed", 2, "passed"), line("uncaught", 1, "passed"), line("misfiled", 1, "failed", "LintError"),
        line("misfiled", 2, "failed", "AccuracyError", "wrong, not caught"), line("honest", 1, "passed"),
        "[2026-12-06 06:16:40.703] [rank 0] [error] a line of another kind", '{"case_id": "later/#1", "op"']) + "\n")
    resume = tmp_path / "resume.jsonl"
    resume.write_text(line("rerun", 1, "passed") + "\n")
    tool = os.path.join(ROOT, "tools", "tag_check.py")
    proc = subprocess.run([sys.executable, tool, str(job), str(night), str(resume)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout.splitlines()
    assert out == ["STALE fixed: tagged reference-suspect, and its 1 cases passed",
                   "UNEXPLAINED ours: ours/#1 RuntimeError: opverify broke it",
                   "MISSED uncaught: declared expect:LintError, and its 1 cases passed",
                   "UNEXPLAINED misfiled: misfiled/#2 AccuracyError: wrong, not caught",
                   "2 unexplained, 1 missed, 1 stale, 3 expected, 3 passed, 1 not run (of 11 operators)"], out
    clean = tmp_path / "clean.jsonl"
    clean.write_text(line("defect", 1, "failed", "AccuracyError") + "\n" + line("ok", 1, "passed") + "\n")
    proc = subprocess.run([sys.executable, tool, str(job), str(clean)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0 and proc.stdout.strip().endswith("(of 11 operators)"), proc.stdout
    (tmp_path / "tasks" / "filed_torch.py").write_text("EXPECTED_ERROR_TYPE = (\n")
    proc = subprocess.run([sys.executable, tool, str(job), str(clean)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "filed_torch.py:" in proc.stderr, proc.stderr
    proc = subprocess.run([sys.executable, tool, str(tmp_path / "missing.json"), str(clean)],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "missing.json" in proc.stderr
