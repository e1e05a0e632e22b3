"""Spare implementation executors import the operator's declared library as they start
(docs/PERFORMANCE.md, "The library preloaded by the spares"): the real opverify-batch on the
cpu backend, one rank, the manifest's order, with the preload (the default) and without
(OPVERIFY_NO_PRELOAD=1). The fixtures (tests/fixtures/library/preload/README.md): an honest
library, one that does not import, one that replaces the runtime's code at import, and a
library nobody declares that a reference executor must never import."""
import json
import os
import shutil
import subprocess

import h5py
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "library", "preload")
BUILD = os.environ.get("OPVERIFY_BUILD_DIR", os.path.join(ROOT, "build"))
MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}


def batch(manifest, run_dir, **env):
    environment = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", **MPI_ENV)
    for name in ("OPVERIFY_NO_PRELOAD", "OPVERIFY_NO_SPARE", "OPVERIFY_SHARED_GOLDEN", "OPVERIFY_PRELOAD"):
        environment.pop(name, None)
    environment.update(env)
    return subprocess.run([os.path.join(BUILD, "runner", "opverify-batch"), str(manifest), "--backend", "cpu",
                           "--run-dir", str(run_dir), "--schedule", "fifo", "--no-ab"],
                          capture_output=True, text=True, timeout=600, env=environment)


def verdicts(run_dir):
    """op -> [error type or None per case]."""
    out = {}
    for folder in sorted((run_dir / "ops").iterdir()):
        result = json.loads((folder / "verify_result.json").read_text())
        failed = {f["case_idx"]: f["error_type"] for f in result["failures"]}
        out[folder.name] = [failed.get(i) for i in range(1, result["total_cases"] + 1)]
    return out


def startups(run_dir):
    """op -> how its implementation executor started (the operator row's extra.startup)."""
    out = {}
    for shard in sorted((run_dir / "shards").glob("rank-*.h5")):
        with h5py.File(shard) as h5:
            for i, row in enumerate(h5["table"][:]):
                if row["kind"] == b"operator":
                    out[row["op_name"].decode()] = json.loads(h5["cases"][f"{i:06d}"].attrs["extra"])["startup"]
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("preload")
    done = {}
    for label, env in (("preload", {}), ("no_preload", {"OPVERIFY_NO_PRELOAD": "1"})):
        run_dir = folder / label
        proc = batch(os.path.join(FIXTURES, "preload.json"), run_dir, **env)
        assert proc.returncode == 1, proc.stderr[-3000:]  # the planted failures
        done[label] = run_dir
    return done


def test_the_preload_changes_no_verdict(runs):
    with_preload, without = verdicts(runs["preload"]), verdicts(runs["no_preload"])
    assert with_preload == without
    assert with_preload["with_goodlib"] == [None, None] and with_preload["with_goodlib2"] == [None, None]
    assert with_preload["zeros"] == ["AccuracyError", "AccuracyError"]
    assert with_preload["with_forgelib"] == ["AccuracyError", "AccuracyError"]  # torch.mul replaced at import


def test_a_spare_serves_the_next_operator_of_its_library_with_the_library_imported(runs):
    started = startups(runs["preload"])
    second = started["with_goodlib2"]  # after with_goodlib, whose spares were preloaded for goodlib
    assert second["spare"] is True, second
    assert second["executor"]["preloaded"] == ["goodlib"] and second["executor"]["preload_ms"] >= 0, second
    assert "preloaded" not in started["zeros"].get("executor", {}), started["zeros"]  # no library: nothing
    for op, start in startups(runs["no_preload"]).items():
        assert "preloaded" not in start.get("executor", {}), (op, start)


def test_a_library_that_replaces_the_runtime_at_import_is_caught_with_the_preload_too(runs):
    # Sealed before the preload imports it; every case fails, not only the first (the count
    # comes from the reference's load when the implementation's reply is not believed).
    for label in runs:
        assert verdicts(runs[label])["with_sealbreaker"] == ["RuntimeTampered", "RuntimeTampered"], label


def test_a_library_that_does_not_import_fails_its_operator_naming_it(runs):
    for label in runs:
        result = json.loads((runs[label] / "ops" / "with_brokenlib" / "verify_result.json").read_text())
        assert [f["error_type"] for f in result["failures"]] == ["ImportError", "ImportError"], label
        message = result["failures"][0]["error_msg"]
        assert "library 'brokenlib' (declared with library/--library) does not import" in message, message
        assert "planted import failure" in message


def test_no_executor_takes_a_preload_from_the_users_environment(tmp_path):
    # evillib makes torch.mul return zeros: a reference executor that imported it would make zero
    # goldens, and `zeros` would pass (or its load would be refused); an operator of goodlib would
    # be refused a process preloaded for another library.
    planted = json.dumps({"library": ["evillib"], "modules": ["evillib"],
                          "python_path": [os.path.join(FIXTURES, "lib")]})
    proc = batch(os.path.join(FIXTURES, "preload.json"), tmp_path / "run", OPVERIFY_PRELOAD=planted)
    assert proc.returncode == 1, proc.stderr[-3000:]
    seen = verdicts(tmp_path / "run")
    assert seen["zeros"] == ["AccuracyError", "AccuracyError"], seen
    assert seen["with_goodlib"] == [None, None] and seen["with_goodlib2"] == [None, None], seen


def write_manifest(path, **defaults):
    manifest = json.load(open(os.path.join(FIXTURES, "preload.json")))
    manifest["defaults"].update(defaults)
    manifest["defaults"]["python_path"] = [os.path.join(FIXTURES, "lib")]
    manifest["operators"] = [dict(op, dir=os.path.join(FIXTURES, "ops")) for op in manifest["operators"]
                             if op["name"] in ("with_goodlib", "with_goodlib2")]
    path.write_text(json.dumps(manifest))
    return path


def test_the_manifest_refuses_a_preload_outside_the_declared_library(tmp_path):
    manifest = write_manifest(tmp_path / "job.json", preload=["goodlib.scale", "os"])
    proc = batch(manifest, tmp_path / "run")
    assert proc.returncode == 2
    assert "preload 'os' is not a declared library package or a submodule of one (library: goodlib)" in proc.stderr


def test_a_submodule_preloads_and_an_empty_list_preloads_nothing(tmp_path):
    for preload, expected in ((["goodlib.scale"], ["goodlib.scale"]), ([], None)):
        run_dir = tmp_path / f"run{len(preload)}"
        proc = batch(write_manifest(tmp_path / "job.json", preload=preload), run_dir)
        assert proc.returncode == 0, proc.stderr[-3000:]
        second = startups(run_dir)["with_goodlib2"]
        assert second["spare"] is True and second["executor"].get("preloaded") == expected, second


# ---- the library's bytecode, compiled once per run (runner/batch/library_bytecode.h) ----------

def copied_fixtures(tmp_path):
    folder = tmp_path / "preload"
    shutil.copytree(FIXTURES, folder, ignore=shutil.ignore_patterns("__pycache__"))
    manifest = json.load(open(folder / "preload.json"))
    manifest["operators"] = [op for op in manifest["operators"] if op["name"] in ("with_goodlib", "zeros")]
    (folder / "job.json").write_text(json.dumps(manifest))
    return folder


def fresh_runtime(tmp_path):
    """A copy of opverify's runtime without bytecode, as a device receives it (OPVERIFY_RUNTIME_DIR)."""
    runtime = tmp_path / "runtime"
    shutil.copytree(os.path.join(ROOT, "runner", "executor", "opverify_runtime"), runtime / "opverify_runtime",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return runtime


@pytest.mark.parametrize("off", [False, True])
def test_the_declared_librarys_sources_are_compiled_before_the_executors_import_them(tmp_path, off):
    """And opverify's runtime's, where its folder is writable (a source tree's)."""
    folder, runtime = copied_fixtures(tmp_path), fresh_runtime(tmp_path)
    proc = batch(folder / "job.json", tmp_path / "run", OPVERIFY_RUNTIME_DIR=str(runtime),
                 **({"OPVERIFY_NO_BYTECODE": "1"} if off else {}))
    assert proc.returncode == 1, proc.stderr[-3000:]  # zeros fails, with_goodlib passes
    assert verdicts(tmp_path / "run") == {"with_goodlib": [None, None], "zeros": ["AccuracyError", "AccuracyError"]}
    compiled = sorted(p.name.split(".")[0] for p in (folder / "lib" / "goodlib").glob("__pycache__/*.pyc"))
    assert compiled == ([] if off else ["__init__", "scale"])
    runtime_compiled = {p.name.split(".")[0] for p in (runtime / "opverify_runtime").glob("__pycache__/*.pyc")}
    assert (not runtime_compiled) if off else {"__init__", "executor", "case_io"} <= runtime_compiled
    # Only the declared library: not the other libraries beside it, nor the operators' files.
    assert not list((folder / "lib" / "evillib").glob("__pycache__"))
    assert not list((folder / "ops").glob("__pycache__"))



def test_compile_sources_runs_only_the_standard_library_and_says_what_did_not_compile(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "site_code_ran"
    (site / "sitecustomize.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("X = 1\n")
    (package / "broken.py").write_text("def f(:\n")
    env = dict(os.environ, PYTHONPATH=str(site))
    proc = subprocess.run([os.path.join(BUILD, "runner", "opverify-executor"), "--compile-sources", str(package)],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "not every source compiled" in proc.stderr
    assert [p.name.split(".")[0] for p in package.glob("__pycache__/*.pyc")] == ["__init__"]
    assert not marker.exists()  # isolated: no site, no PYTHONPATH


def test_under_mpirun_two_ranks_give_the_same_verdicts_and_one_compiles_the_bytecode(tmp_path, runs):
    folder = copied_fixtures(tmp_path)
    manifest = json.load(open(folder / "preload.json"))
    (folder / "job.json").write_text(json.dumps(manifest))
    environment = dict(os.environ, OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1", **MPI_ENV)
    for name in ("OPVERIFY_NO_PRELOAD", "OPVERIFY_NO_BYTECODE", "OPVERIFY_PRELOAD"):
        environment.pop(name, None)
    run_dir = tmp_path / "run"
    proc = subprocess.run(["mpirun", "-np", "2", "--oversubscribe", os.path.join(BUILD, "runner", "opverify-batch"),
                           str(folder / "job.json"), "--backend", "cpu", "--run-dir", str(run_dir), "--no-ab"],
                          capture_output=True, text=True, timeout=600, env=environment)
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert verdicts(run_dir) == verdicts(runs["preload"])
    logs = sorted(p.name for p in (run_dir / "logs").glob("rank-*.bytecode.log"))
    assert logs == ["rank-0000.bytecode.log"], logs  # the node's first rank alone
    assert list((folder / "lib" / "goodlib").glob("__pycache__/*.pyc"))
