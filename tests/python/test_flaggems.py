"""FlagGems in its library-backed form (jobs/flaggems_library.json, jobs/flaggems/tasks):
tools/flaggems_tasks.py on a small FlagGems-shaped tree of our own, and the static lint of
every generated implementation through FlagGems' real source when it is in jobs/flaggems/src
(docs/LIBRARIES.md, "FlagGems"): each passes, or fails with the type its task file expects
(FlagGems' own torch compute on the operator's path, attributed there)."""
import importlib.util
import json
import os
import textwrap

import pytest

import flaggems_tasks
import tag_check
from opverify_runtime import lint
from task_file import task_constants

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JOBS = os.path.join(ROOT, "jobs")
SRC = os.path.join(JOBS, "flaggems", "src")
TASKS = os.path.join(JOBS, "flaggems", "tasks")
HAVE_FLAGGEMS = os.path.isdir(os.path.join(SRC, "flag_gems", "ops"))
NO_FLAGGEMS = "FlagGems' source is not in jobs/flaggems/src: bring it as jobs/flaggems/src/README.md says"


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(textwrap.dedent(text))


@pytest.fixture
def small_flaggems(tmp_path):
    """A FlagGems-shaped source tree: the registration table, and a test of one op."""
    write(tmp_path / "src" / "flag_gems" / "__init__.py", '''\
        from flag_gems.ops import *  # noqa: F403
        _FULL_CONFIG = (
            ("abs", abs),
            ("abs_", abs_),
            ("add.Tensor", add),
            ("add.out", add_out),
            ("xlogy.OutTensor", xlogy_out),
            ("sum.dim_IntList", sum_dim),
            ("unsqueeze", unsqueeze),
            ("mm", mm),
            ("bernoulli.p", bernoulli_p),
            ("no_such_op_in_torch", no_such),
        )
    ''')
    write(tmp_path / "tests" / "accuracy_utils.py", '''\
        QUICK_MODE = False
        POINTWISE_SHAPES = [(2, 19, 7)] if QUICK_MODE else [(), (1,), (64, 80), (8, 8, 1024)]
    ''')
    write(tmp_path / "tests" / "test_abs.py", '''\
        @pytest.mark.parametrize("shape", utils.POINTWISE_SHAPES)
        @pytest.mark.parametrize("dtype", utils.FLOAT_DTYPES)
        def test_abs(shape, dtype):
            pass
    ''')
    out = tmp_path / "jobs" / "fg" / "tasks"
    manifest = tmp_path / "jobs" / "fg.json"
    assert flaggems_tasks.main(["--src", str(tmp_path / "src"), "--tests", str(tmp_path / "tests"),
                                "--out", str(out), "--manifest", str(manifest)]) == 0
    return out, manifest


def load_task(path):
    spec = importlib.util.spec_from_file_location("generated_task", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generator_writes_a_task_and_an_implementation_per_functional_operator(small_flaggems):
    out, manifest = small_flaggems
    assert sorted(os.listdir(out)) == ["INDEX.md", "abs_torch.py", "abs_triton_impl.py", "add_torch.py",
                                       "add_triton_impl.py", "mm_torch.py", "mm_triton_impl.py", "sum_dim_torch.py",
                                       "sum_dim_triton_impl.py"]
    with open(out / "abs_triton_impl.py") as f:
        assert "return flag_gems.abs(x0)" in f.read()
    with open(out / "sum_dim_triton_impl.py") as f:  # every argument, as ATen's dispatcher passes them
        assert "return flag_gems.sum_dim(x0, [-1], False, dtype=None)" in f.read()
    abs_task = load_task(out / "abs_torch.py")
    (x,) = abs_task.get_inputs(dtype="float32")
    assert tuple(x.shape) == (64, 80)  # FlagGems' own test shape: the smallest of 4096 elements or more
    assert abs_task.CASES == [dict(dtype="float16"), dict(dtype="float32"), dict(dtype="bfloat16")]
    assert abs_task.Model()(x).equal(x.abs())
    mm = load_task(out / "mm_torch.py")
    a, b = mm.get_inputs(dtype="float32")
    assert mm.Model()(a, b).shape == (64, 48)


def test_the_generator_reads_a_tests_own_lists_and_keeps_torch_linalg_to_its_dtypes(tmp_path):
    """A test's own constants (the full branch of `if cfg.QUICK_MODE:`) and literal lists of
    torch dtypes give the task its shape and dtypes, as FlagGems tests the op (on the device a
    default float16 cdist failed FlagGems' own float32-only assertion); torch.linalg's
    decompositions keep float32 whatever a test says (torch has no half-precision LU); an op
    whose input is a quantized tensor is left out, saying why."""
    write(tmp_path / "src" / "flag_gems" / "__init__.py", '''\
        _FULL_CONFIG = (("abs", abs), ("cdist", cdist), ("linalg_lu", linalg_lu), ("dequantize.self", dequantize))
    ''')
    write(tmp_path / "tests" / "accuracy_utils.py", "POINTWISE_SHAPES = [(64, 80)]\n")
    write(tmp_path / "tests" / "test_abs.py", '''\
        if cfg.QUICK_MODE:
            ABS_SHAPES = [(4,)]
            ABS_DTYPES = [torch.float32]
        else:
            ABS_SHAPES = [(8,), (32, 256)]
            ABS_DTYPES = [torch.float16, torch.float32]

        @pytest.mark.parametrize("shape", ABS_SHAPES)
        @pytest.mark.parametrize("dtype", ABS_DTYPES + [torch.bool])
        def test_abs(shape, dtype):
            pass
    ''')
    write(tmp_path / "tests" / "test_cdist.py", '''\
        @pytest.mark.parametrize("dtype", [torch.float32])
        def test_cdist(dtype):
            pass
    ''')
    write(tmp_path / "tests" / "test_linalg_lu.py", '''\
        @pytest.mark.parametrize("dtype", utils.FLOAT_DTYPES)
        def test_linalg_lu(dtype):
            pass
    ''')
    out, manifest = tmp_path / "jobs" / "fg" / "tasks", tmp_path / "jobs" / "fg.json"
    assert flaggems_tasks.main(["--src", str(tmp_path / "src"), "--tests", str(tmp_path / "tests"),
                                "--out", str(out), "--manifest", str(manifest)]) == 0
    abs_task = load_task(out / "abs_torch.py")
    assert abs_task.CASES == [dict(dtype="float16"), dict(dtype="float32")]
    assert tuple(abs_task.get_inputs(dtype="float32")[0].shape) == (32, 256)
    assert load_task(out / "cdist_torch.py").CASES == [dict(dtype="float32")]
    assert load_task(out / "linalg_lu_torch.py").CASES == [dict(dtype="float32")]
    index = (out / "INDEX.md").read_text()
    assert "tests/test_abs.py: ABS_SHAPES, ABS_DTYPES" in index and "tests/test_cdist.py: [torch.float32]" in index
    assert "| `dequantize.self` |" in index and "quantized tensor" in index.split("| `dequantize.self` |")[1].split("\n")[0]
    assert not (out / "dequantize_torch.py").exists()


def test_the_generator_reads_the_lists_a_test_imports_from_accuracy_utils(tmp_path):
    """FlagGems' tests/test_norm.py imports its lists by name (`from .accuracy_utils import
    FLOAT_DTYPES, REDUCTION_SHAPES`) where most tests write `utils.REDUCTION_SHAPES`: ten tasks
    (norm_scalar, logsumexp, rsub, fmod, ...) were on the default shape for want of that."""
    write(tmp_path / "src" / "flag_gems" / "__init__.py", '''\
        _FULL_CONFIG = (("norm.Scalar", norm_scalar),)
    ''')
    write(tmp_path / "tests" / "accuracy_utils.py", "REDUCTION_SHAPES = [(2, 32), (64, 128)]\n")
    write(tmp_path / "tests" / "test_norm.py", '''\
        from .accuracy_utils import FLOAT_DTYPES as FLOATS, REDUCTION_SHAPES, gems_assert_close

        @pytest.mark.parametrize("shape", REDUCTION_SHAPES)
        @pytest.mark.parametrize("dtype", FLOATS)
        def test_norm_scalar(shape, dtype):
            pass
    ''')
    out, manifest = tmp_path / "jobs" / "fg" / "tasks", tmp_path / "jobs" / "fg.json"
    assert flaggems_tasks.main(["--src", str(tmp_path / "src"), "--tests", str(tmp_path / "tests"),
                                "--out", str(out), "--manifest", str(manifest)]) == 0
    task = load_task(out / "norm_scalar_torch.py")
    assert tuple(task.get_inputs(dtype="float32")[0].shape) == (64, 128)
    assert [c["dtype"] for c in task.CASES] == list(flaggems_tasks.DTYPE_LISTS["FLOAT_DTYPES"])
    assert "tests/test_norm.py: REDUCTION_SHAPES, FLOATS" in (out / "INDEX.md").read_text()


def test_the_generator_follows_a_tests_float32_reference_and_its_narrowed_dtype_list(tmp_path):
    """The eleventh device run: FlagGems' tests of airy_ai and bessel_j1 compute the reference in
    float32 and cast it back (torch has no float16/bfloat16 kernel of them, on the CPU or the GPU),
    and shifted_chebyshev_polynomial_t's test narrows its dtypes with a comprehension. The tasks
    had native float16 references, which fail on every device (a ReferenceError, not FlagGems'),
    and float16 cases the test never runs."""
    import torch
    write(tmp_path / "src" / "flag_gems" / "__init__.py", '''\
        _FULL_CONFIG = (("special_airy_ai", special_airy_ai),
                        ("special_shifted_chebyshev_polynomial_t", special_shifted_chebyshev_polynomial_t))
    ''')
    write(tmp_path / "tests" / "accuracy_utils.py", "POINTWISE_SHAPES = [(64, 80)]\n")
    write(tmp_path / "tests" / "test_special_airy_ai.py", '''\
        @pytest.mark.parametrize("shape", utils.POINTWISE_SHAPES)
        @pytest.mark.parametrize("dtype", utils.FLOAT_DTYPES)
        def test_special_airy_ai(shape, dtype):
            ref_out = torch.special.airy_ai(ref_inp.float()).to(dtype)
    ''')
    write(tmp_path / "tests" / "test_special_shifted_chebyshev_polynomial_t.py", '''\
        if cfg.QUICK_MODE:
            FLOAT_DTYPES = [torch.float32]
        else:
            FLOAT_DTYPES = [d for d in (*utils.FLOAT_DTYPES, torch.float64) if d in (torch.float32, torch.float64)]

        @pytest.mark.parametrize("shape", utils.POINTWISE_SHAPES)
        @pytest.mark.parametrize("dtype", FLOAT_DTYPES)
        def test_special_shifted_chebyshev_polynomial_t(shape, dtype):
            ref_out = torch.ops.aten.special_shifted_chebyshev_polynomial_t(ref_x, ref_n)
    ''')
    out, manifest = tmp_path / "jobs" / "fg" / "tasks", tmp_path / "jobs" / "fg.json"
    assert flaggems_tasks.main(["--src", str(tmp_path / "src"), "--tests", str(tmp_path / "tests"),
                                "--out", str(out), "--manifest", str(manifest)]) == 0
    airy = load_task(out / "special_airy_ai_torch.py")
    assert [c["dtype"] for c in airy.CASES] == ["float16", "float32", "bfloat16"]
    for dtype in ("float16", "bfloat16"):
        x = airy.get_inputs(dtype=dtype)[0]
        got = airy.Model()(x)  # torch's own float16 airy_ai raises, here and on a GPU
        assert got.dtype == x.dtype and torch.equal(got, torch.special.airy_ai(x.float()).to(x.dtype))
    x = airy.get_inputs(dtype="float32")[0]
    assert torch.equal(airy.Model()(x), torch.special.airy_ai(x))  # float32 as it was
    chebyshev = load_task(out / "special_shifted_chebyshev_polynomial_t_torch.py")
    assert [c["dtype"] for c in chebyshev.CASES] == ["float32", "float64"]
    assert "if x0.dtype" not in (out / "special_shifted_chebyshev_polynomial_t_torch.py").read_text()


def test_the_generator_judges_only_outputs_with_one_right_answer(tmp_path):
    """The eleventh device run: svd's U differed from the golden in exactly half its elements,
    as singular vectors may, being unique only up to sign; and unique_consecutive's outputs
    not asked for are placeholders (ATen's empty tensors, FlagGems' None). svd's task asks for
    the singular values only, linalg_svd has none, and a unique's task asks for every output."""
    write(tmp_path / "src" / "flag_gems" / "__init__.py", '''\
        _FULL_CONFIG = (("svd", svd), ("linalg_svd", linalg_svd), ("unique_consecutive", unique_consecutive))
    ''')
    out, manifest = tmp_path / "jobs" / "fg" / "tasks", tmp_path / "jobs" / "fg.json"
    assert flaggems_tasks.main(["--src", str(tmp_path / "src"), "--out", str(out), "--manifest", str(manifest)]) == 0
    assert "flag_gems.svd(x0, True, False)" in (out / "svd_triton_impl.py").read_text()
    assert "torch.ops.aten.svd.default(x0, True, False)" in (out / "svd_torch.py").read_text()
    assert not (out / "linalg_svd_torch.py").exists()
    index = (out / "INDEX.md").read_text()
    assert "| `linalg_svd` |" in index and "unique only up to sign" in index.split("| `linalg_svd` |")[1].split("\n")[0]
    assert "flag_gems.unique_consecutive(x0, True, True, None)" in (out / "unique_consecutive_triton_impl.py").read_text()


def test_a_polynomials_degree_is_a_whole_number_as_in_flaggems_tests(tmp_path):
    """The eleventh device run: with random real degrees most of the Chebyshev cases' elements
    tested ATen's truncation of n and its n < 0 convention, not the polynomials."""
    import torch
    write(tmp_path / "src" / "flag_gems" / "__init__.py", '''\
        _FULL_CONFIG = (("special_chebyshev_polynomial_w", special_chebyshev_polynomial_w),)
    ''')
    out, manifest = tmp_path / "jobs" / "fg" / "tasks", tmp_path / "jobs" / "fg.json"
    assert flaggems_tasks.main(["--src", str(tmp_path / "src"), "--out", str(out), "--manifest", str(manifest)]) == 0
    x, n = load_task(out / "special_chebyshev_polynomial_w_torch.py").get_inputs(dtype="float32")
    assert n.dtype == torch.float32 and torch.equal(n, n.round()) and 0 <= n.min() and n.max() <= 9
    assert (x < 0).any() and not torch.equal(x, x.round())  # x is as before


def test_the_generator_removes_the_files_it_wrote_for_operators_it_no_longer_generates(small_flaggems, tmp_path):
    out, manifest = small_flaggems
    write(out / "gone_torch.py", '''"""FlagGems `gone`, written by tools/flaggems_tasks.py."""\n''')
    write(out / "ours_torch.py", '''"""A task of someone else's."""\n''')
    assert flaggems_tasks.main(["--src", str(tmp_path / "src"), "--out", str(out), "--manifest", str(manifest)]) == 0
    assert not (out / "gone_torch.py").exists() and (out / "ours_torch.py").exists()


def test_the_generator_says_why_it_left_each_registration_out(small_flaggems):
    out, manifest = small_flaggems
    with open(out / "INDEX.md") as f:
        index = f.read()
    for overload, why in [("abs_", "in-place overload"), ("add.out", "out= overload"), ("xlogy.OutTensor", "out="),
                          ("unsqueeze", "a view or metadata query"), ("bernoulli.p", "random operator"),
                          ("no_such_op_in_torch", "this torch has no such ATen operator")]:
        assert f"| `{overload}` |" in index and why in index.split(f"| `{overload}` |")[1].split("\n")[0]
    with open(manifest) as f:
        job = json.load(f)
    assert job["defaults"]["library"] == ["flag_gems"] and job["defaults"]["python_path"] == ["flaggems/src", "flaggems/adapter"]
    assert [e["name"] for e in job["operators"]] == ["abs", "add", "sum_dim", "mm"]
    assert job["operators"][0] == {"name": "abs", "dir": "fg/tasks", "sweep": {"dtype": ["float16", "float32",
                                                                                     "bfloat16"]}}


def flaggems_entries():
    with open(os.path.join(JOBS, "flaggems_library.json")) as f:
        return json.load(f)["operators"]


ENTRIES = flaggems_entries()


def test_the_committed_manifest_matches_the_committed_tasks():
    names = {e["name"] for e in ENTRIES}
    files = {f[:-len("_triton_impl.py")] for f in os.listdir(TASKS) if f.endswith("_triton_impl.py")}
    assert names == files and len(names) > 200
    for entry in ENTRIES:
        expected = task_constants(os.path.join(TASKS, f"{entry['name']}_torch.py"))
        found = flaggems_tasks.DEVICE_FINDINGS.get(entry["name"])
        # torch-in-library: the lint's expected refusal, or torch compute the runtime evidence
        # caught on the device (a finding); a finding's other tags (library-defect, ...) as found.
        tags = set(entry.get("tags", [])) - {"flaggems"}
        if "EXPECTED_LINT_TYPE" in expected:
            assert tags == {"torch-in-library"}, entry
        else:
            assert tags == ({found[0]} if found else set()), entry


def test_each_device_finding_names_a_generated_task_and_a_line_of_flaggems():
    """DEVICE_FINDINGS (the manifest's tags for failures attributed on a device) is about tasks
    the generator writes, each with FlagGems' file and line, and its tag is one the GPU tests and
    tools/tag_check.py know."""
    names = {e["name"] for e in ENTRIES}
    for name, (tag, where) in flaggems_tasks.DEVICE_FINDINGS.items():
        assert name in names, name
        assert tag in tag_check.KNOWN_TAGS, (name, tag)
        assert tag == "reference-suspect" or where.startswith("flag_gems/"), (name, where)
        text = open(os.path.join(TASKS, f"{name}_torch.py")).read()
        assert f"attributed ({tag}, docs/LIBRARIES.md)" in text, name


@pytest.mark.skipif(not HAVE_FLAGGEMS, reason=NO_FLAGGEMS)
@pytest.mark.parametrize("entry", ENTRIES, ids=[e["name"] for e in ENTRIES])
def test_the_static_lint_of_flaggems_implementations(entry):
    """Every implementation passes the lint through FlagGems' source, or fails with the type
    its task file expects: no refusal of opverify's own (docs/LIBRARIES.md attributes each)."""
    expected = task_constants(os.path.join(TASKS, f"{entry['name']}_torch.py"))
    result = lint.lint_file(os.path.join(TASKS, f"{entry['name']}_triton_impl.py"),
                            non_compute=bool(expected.get("NON_COMPUTE")), library=["flag_gems"], python_path=[SRC])
    shown = json.dumps({k: v for k, v in result["checks"].items() if not v["passed"]})[:3000]
    if "EXPECTED_LINT_TYPE" in expected:
        assert result["regression_type"] == expected["EXPECTED_LINT_TYPE"], shown
    else:
        assert result["valid"], shown


OVERRIDES = json.load(open(os.path.join(ROOT, "jobs", "flaggems_override.json")))["operators"]


@pytest.mark.skipif(not HAVE_FLAGGEMS, reason=NO_FLAGGEMS)
def test_the_static_lint_of_flaggems_overrides_follows_each_operators_own_registration():
    """The dispatch-override form: the lint walks from flag_gems:use_gems into the registration
    table, the rows of the operator under test only (another operator's torch use is not this
    one's), with data movement judged as such. Every operator passes, or fails type 3 at a line
    of FlagGems' own (tagged torch-in-library, each in docs/LIBRARIES.md): none for opverify."""
    wrong = []
    for entry in OVERRIDES:
        override = entry["override"]
        result = lint.lint_entries([override["enable"]], non_compute=bool(entry.get("non_compute")),
                                   library=["flag_gems"], python_path=[SRC, os.path.join(ROOT, "jobs", "flaggems", "adapter")],
                                   overrides=override["op"])
        failing = {name: check for name, check in result["checks"].items() if not check["passed"]}
        files = {v.get("file", "") for check in failing.values() for v in check.get("violations", [])}
        if "torch-in-library" in entry.get("tags", []):
            ok = result["regression_types"] == [3] and files and all(os.path.join("flag_gems", "") in f for f in files)
        else:
            ok = result["valid"] and not result.get("error")
        if not ok:
            wrong.append((entry["name"], result["regression_types"], result.get("error"), json.dumps(failing)[:600]))
    assert not wrong, wrong
