"""flash-linear-attention (jobs/fla.json, jobs/fla/ops): a public Triton library shaped unlike
FlagGems and Liger (nn.Module layers, autograd Functions, a backend dispatch decorator, its own
autotune cache, aliases, `**kwargs` forwarded through launchers), its source carried in
jobs/fla/src.

The CPU part runs anywhere: the manifest loads, every reference runs and is finite, the einops
stand-in (jobs/fla/adapter) agrees with torch, and, with fla's source present, the static lint
follows each implementation into fla and gives its task file's verdict (docs/LIBRARIES.md,
"flash-linear-attention"). The GPU part runs the job with every check on and skips without CUDA.
"""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

from test_gpu_library import JOBS, check_entry, entries, expectation, gpu, lint, run_job, tool

FLA = os.path.join(JOBS, "fla")
FLA_SRC = os.path.join(FLA, "src")
HAVE_FLA = os.path.isdir(os.path.join(FLA_SRC, "fla", "ops"))
NO_FLA = ("flash-linear-attention's source is not in jobs/fla/src: bring it as jobs/fla/src/README.md says "
          "(git archive of its fla package; docs/LIBRARIES.md)")
FLA_OPS = entries("fla.json")


def sweep_cases(entry):
    """The parameters of each case of the entry's sweep (every combination of its values)."""
    import itertools
    names = list(entry["sweep"])
    return [dict(zip(names, values)) for values in itertools.product(*(entry["sweep"][n] for n in names))]


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_manifest_loads_with_its_cases(opverify_bin):
    proc = subprocess.run([tool(opverify_bin, "opverify-batch"), os.path.join(JOBS, "fla.json"), "--dry-run"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
    for entry in FLA_OPS:
        assert entry["name"] in proc.stdout + proc.stderr


@pytest.mark.parametrize("entry", FLA_OPS, ids=[e["name"] for e in FLA_OPS])
def test_each_reference_runs_on_the_cpu_for_every_case_of_its_sweep(entry):
    """Every swept case's inputs build and the reference gives a finite result of the input's
    dtype (float32 for the gates' sums and softmax), in float64 too (reference trust re-runs it so)."""
    import torch
    sys.path.insert(0, os.path.join(FLA, "ops"))
    try:
        task = load(os.path.join(FLA, "ops", f"{entry['name']}_torch.py"), f"fla_task_{entry['name']}")
    finally:
        sys.path.remove(os.path.join(FLA, "ops"))
    for params in sweep_cases(entry):
        inputs = task.get_inputs(**params)
        out = task.Model(*task.get_init_inputs())(*inputs)
        assert torch.isfinite(out.float()).all(), params
        assert out.dtype == (torch.float32 if "dtype" not in params or entry["name"] in ("softmax", "logsumexp")
                             else getattr(torch, params["dtype"])), params
        wide = task.Model()(*[x.double() if x.is_floating_point() else x for x in inputs])
        assert wide.dtype == torch.float64 and torch.allclose(wide, out.double(), rtol=0.02, atol=0.05), params


def test_the_einops_stand_in_agrees_with_torch():
    import torch
    einops = load(os.path.join(FLA, "adapter", "einops", "__init__.py"), "fla_einops_standin")
    if not hasattr(einops, "EinopsError"):
        pytest.skip("a real einops is on sys.path: the stand-in steps aside")
    x = torch.randn(2, 3, 4, 6)
    assert torch.equal(einops.rearrange(x, "b t h d -> b h t d"), x.permute(0, 2, 1, 3))
    assert torch.equal(einops.rearrange(x, "b t h d -> 1 (b t) h d"), x.reshape(1, 6, 4, 6))
    assert torch.equal(einops.rearrange(x, "... (g d) -> ... g d", g=2), x.reshape(2, 3, 4, 2, 3))
    assert torch.equal(einops.rearrange(x.reshape(2, 3, 4, 2, 3), "... g d -> ... (g d)"), x)
    w = torch.randn(5, 1, 4)
    assert torch.equal(einops.rearrange(w, "d 1 w -> d w"), w[:, 0])
    assert torch.equal(einops.repeat(x, "b t h d -> b t (h g) d", g=3), x.repeat_interleave(3, dim=2))
    assert torch.equal(einops.repeat(x[0, 0, 0], "d -> b d", b=4), x[0, 0, 0].expand(4, 6))
    assert torch.allclose(einops.reduce(x, "b t h d -> b h", "mean"), x.mean(dim=(1, 3)))
    assert torch.equal(einops.reduce(x, "b t h d -> b t", "max"), x.amax(dim=(2, 3)))
    a, b = torch.randn(2, 4, 5, 8), torch.randn(2, 4, 7, 8)
    assert torch.allclose(einops.einsum(a, b, "b h i d, b h j d -> b h i j"), a @ b.transpose(-1, -2), atol=1e-5)
    with pytest.raises(einops.EinopsError, match="divisible"):
        einops.rearrange(x, "b t h (g d) -> b t h g d", g=4)


@pytest.mark.skipif(not HAVE_FLA, reason=NO_FLA)
@pytest.mark.parametrize("entry", FLA_OPS, ids=[e["name"] for e in FLA_OPS])
def test_the_static_lint_of_fla_implementations(opverify_bin, entry):
    """Each implementation passes the lint through fla's source, or fails with its task file's
    type where fla's own launcher computes with torch (the line named in docs/LIBRARIES.md)."""
    code, result = lint(opverify_bin, os.path.join(FLA, "ops", f"{entry['name']}_triton_impl.py"), ["fla"], FLA_SRC)
    expected = expectation(entry)
    if expected:
        assert code != 0 and result["regression_type"] == expected[1], str(result)[:3000]
    else:
        assert code == 0 and result["valid"], str(result)[:3000]


@pytest.fixture(scope="module")
def fla_run(opverify_bin, tmp_path_factory):
    done = {}

    def get(job):
        if job not in done:
            done[job] = run_job(opverify_bin, job, tmp_path_factory.mktemp("fla") / "run")
        return done[job]
    return get


@gpu
@pytest.mark.skipif(not HAVE_FLA, reason=NO_FLA)
@pytest.mark.parametrize("entry", FLA_OPS, ids=[e["name"] for e in FLA_OPS])
def test_fla_operators_with_every_check_on(fla_run, entry):
    check_entry(fla_run, "fla.json", entry)


def tf32_reach(opverify_bin, entry, params, seed, tmp_path):
    """tools/tf32_reach.py's verdict for one seed of an fla task: `opverify compare
    --precision-mode tf32` of the reference on its inputs rounded once to TF32 against the
    reference on the inputs as they are: (exit code, result)."""
    import tf32_reach as tool  # tools/ (conftest puts it on the path)
    task = tool.load_task(os.path.join(FLA, "ops", f"{entry['name']}_torch.py"))
    return tool.reach(task, params, seed, opverify_bin, str(tmp_path))


def float32_cases(entry):
    return [params for params in sweep_cases(entry) if params.get("dtype") == "float32"]


TF32_TASKS = [e for e in FLA_OPS if e.get("precision_mode") == "tf32" and any(float32_cases(e))]
# The float32 cases left out of their sweeps because no TF32 computation passes them (below).
TF32_OUT_OF_REACH = ["chunk_gla", "chunk_linear_attn", "chunk_retention"]


@pytest.mark.parametrize("entry", TF32_TASKS, ids=[e["name"] for e in TF32_TASKS])
def test_each_float32_case_under_tf32_is_one_a_tf32_computation_can_pass(opverify_bin, entry, tmp_path):
    """precision_mode tf32 judges float32 outputs by the hifloat32 rows, made to admit TF32's
    rounding. A float32 case is fair only if the reference itself, on its inputs rounded once to
    TF32 (what even an ideal TF32 kernel does), passes against the golden, for every seed."""
    for params in float32_cases(entry):
        for seed in range(entry.get("seeds", 3)):
            code, result = tf32_reach(opverify_bin, entry, params, seed, tmp_path)
            assert code == 0, (params, seed, json.dumps(result)[:1500])


@pytest.mark.parametrize("name", TF32_OUT_OF_REACH)
def test_the_float32_cases_left_out_are_out_of_a_tf32_computations_reach(opverify_bin, name, tmp_path):
    """chunk_gla's, chunk_linear_attn's and chunk_retention's float32 cases (standard-normal q, k,
    v: outputs that are sums of terms of both signs) fail eco under tf32 even with only the inputs
    rounded once to TF32: every TF32 kernel, right or wrong, would fail them (fla's own failed the
    first two at 0.924 and 0.929 matched on the device, docs/LIBRARIES.md), so their sweeps run
    bfloat16 alone, and each task file says why."""
    entry = next(e for e in FLA_OPS if e["name"] == name)
    assert entry["sweep"]["dtype"] == ["bfloat16"], entry
    params = dict({k: v[0] for k, v in entry["sweep"].items()}, dtype="float32")
    code, result = tf32_reach(opverify_bin, entry, params, 0, tmp_path)
    import tf32_reach as tool
    eco = tool.eco_of(result)
    assert code == 1 and eco["matched_ratio"] < 0.99 and eco["over_count"] == 0, json.dumps(result)[:1500]


def test_the_tf32_reach_tool_names_a_case_out_of_reach(opverify_bin):
    """tools/tf32_reach.py, as a task author runs it: exit 1 and OUT OF REACH for chunk_gla's
    float32 case, 0 with every seed's matched ratio for chunk_simple_gla's, 2 naming the task for
    a bad parameter or a reference whose output is not float32."""
    tool = os.path.join(os.path.dirname(__file__), "..", "..", "tools", "tf32_reach.py")

    def run(task, *args):
        return subprocess.run([sys.executable, tool, os.path.join(FLA, "ops", task), "--opverify", opverify_bin,
                               *args], capture_output=True, text=True, timeout=300)
    out = run("chunk_gla_torch.py", "--param", "dtype=float32", "--seeds", "2")
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stdout.splitlines()[-1].startswith("OUT OF REACH") and "seed 1: FAILS: eco matched 0.97" in out.stdout
    out = run("chunk_simple_gla_torch.py", "--param", "dtype=float32", "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    result = json.loads(out.stdout)
    assert result["reachable"] and [s["seed"] for s in result["seeds"]] == [0, 1, 2]
    assert all(0.99 <= s["eco"]["matched_ratio"] < 1 for s in result["seeds"]), result
    for args, said in ((["--param", "dtype"], "expected NAME=VALUE"), ([], "not float32")):
        out = run("chunk_simple_gla_torch.py", *args)
        assert out.returncode == 2 and "chunk_simple_gla_torch.py" in out.stderr and said in out.stderr, out.stderr
