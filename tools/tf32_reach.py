#!/usr/bin/env python3
"""Can any TF32 computation pass a task's float32 case under precision_mode tf32 (or hf32)?

    tools/tf32_reach.py TASK_torch.py [--param NAME=VALUE ...] [--seeds 3] [--path DIR ...]
                        [--opverify BUILD/runner/opverify] [--json]

`precision_mode: "tf32"` judges float32 outputs by PRECISION.md's hifloat32 rows, made to admit
TF32's rounding. A case is fair only if an ideal TF32 computation passes it. This tool runs the
task's reference (`Model`) twice for each seed:
- on the case's inputs as opverify makes them (`get_inputs(**params)` under the seed, as the
  executor seeds it: seeds 0, 1, 2, ...): the golden;
- on the same inputs with every float32 tensor rounded once to TF32 (10 mantissa bits, to
  nearest, ties away, as PTX's cvt.rna.tf32.f32): the least rounding any TF32 computation of it
  does.

`opverify compare --precision-mode tf32` then judges the second against the first. A seed that
fails shows the case is out of every TF32 computation's reach, right or wrong. The fix is the
case's inputs or dtypes, not the kernel (docs/LIBRARIES.md, fla's chunked operators). The check
is necessary, not sufficient: a real kernel rounds its intermediates too.

`--param` gives get_inputs' keyword arguments (VALUE read as JSON where it parses, e.g. 64 or
"float32", else as a string); with none, get_inputs() runs with its defaults. `--path` adds
folders to sys.path, e.g. the task's library (the task's own folder is added always).
Prints each seed's verdict and eco matched ratio; exit 0 when every seed passes, 1 when any is
out of reach, 2 for bad input.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def tf32_rounded(x, torch):
    """x rounded once to TF32 (to nearest, ties away) where it is a float32 tensor; finite values
    only (inf and NaN stay); anything else unchanged."""
    if not (isinstance(x, torch.Tensor) and x.dtype == torch.float32):
        return x
    bits = x.contiguous().view(torch.int32)
    rounded = ((bits + (1 << 12)) & ~((1 << 13) - 1)).view(torch.float32)
    return torch.where(torch.isfinite(x), rounded, x)


def load_task(path, paths=()):
    """The task module at `path`, its folder and `paths` on sys.path while it loads."""
    added = [os.path.dirname(os.path.abspath(path))] + [os.path.abspath(p) for p in paths]
    sys.path[:0] = added
    try:
        spec = importlib.util.spec_from_file_location(
            "tf32_reach_" + os.path.splitext(os.path.basename(path))[0], path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        for p in added:
            sys.path.remove(p)


def seed_inputs(task, params, seed, torch):
    """get_inputs(**params) under `seed`, seeded as the executor seeds a case."""
    sys.path.insert(0, os.path.join(ROOT, "runner", "executor"))
    try:
        from opverify_runtime.case_io import seed_everything
    except ImportError:  # a copy of this tool without the runtime beside it
        seed_everything = None
    finally:
        sys.path.pop(0)
    if seed_everything is not None:
        seed_everything(seed, torch)
    else:
        torch.manual_seed(seed)
    return list(task.get_inputs(**params))


def reach(task, params, seed, opverify, workdir):
    """(exit code of opverify compare, its JSON result) for one seed: the reference on the
    inputs rounded once to TF32 against the reference on the inputs as they are."""
    import numpy
    import torch
    inputs = seed_inputs(task, params, seed, torch)
    with torch.no_grad():
        golden = task.Model(*task.get_init_inputs())(*inputs)
        reached = task.Model(*task.get_init_inputs())(*[tf32_rounded(x, torch) for x in inputs])
    if isinstance(golden, (list, tuple)):  # the first output is judged
        golden, reached = golden[0], reached[0]
    if golden.dtype != torch.float32:
        raise ValueError(f"the reference's output is {golden.dtype}, not float32: the tf32 rows judge float32 "
                         "outputs only (give --param dtype=float32 where the task takes one)")
    paths = [os.path.join(workdir, f"seed{seed}-{name}.npy") for name in ("golden", "tf32")]
    numpy.save(paths[0], golden.numpy())
    numpy.save(paths[1], reached.numpy())
    proc = subprocess.run([opverify, "compare", "--golden", paths[0], "--actual", paths[1], "--precision-mode",
                           "tf32", "--json"], capture_output=True, text=True, timeout=600)
    if proc.returncode not in (0, 1):
        raise ValueError(f"opverify compare: {proc.stderr.strip()[-500:]}")
    return proc.returncode, json.loads(proc.stdout)


def eco_of(result):
    """The eco metrics of a compare result (one output, or the first of several)."""
    output = result["outputs"][0] if "outputs" in result else result
    return output["metrics"]["eco"]


def parse_params(pairs):
    params = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise ValueError(f"--param {pair!r}: expected NAME=VALUE")
        try:
            params[name] = json.loads(value)
        except ValueError:
            params[name] = value
    return params


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("task", help="the task file (<op>_torch.py: Model, get_inputs, get_init_inputs)")
    parser.add_argument("--param", action="append", default=[], help="NAME=VALUE for get_inputs (repeatable)")
    parser.add_argument("--seeds", type=int, default=3, help="seeds 0 .. N-1 (opverify's default: 3)")
    parser.add_argument("--path", action="append", default=[], help="a folder for sys.path (repeatable)")
    parser.add_argument("--opverify", default=os.path.join(ROOT, "build", "runner", "opverify"),
                        help="the opverify program (default: build/runner/opverify)")
    parser.add_argument("--json", action="store_true", help="print one JSON object instead")
    args = parser.parse_args(argv)
    try:
        if not os.access(args.opverify, os.X_OK):
            raise ValueError(f"{args.opverify}: no opverify program there (build it, or give --opverify)")
        if args.seeds < 1:
            raise ValueError("--seeds must be at least 1")
        params = parse_params(args.param)
        task = load_task(args.task, args.path)
        seeds = []
        with tempfile.TemporaryDirectory(prefix="tf32-reach-") as workdir:
            for seed in range(args.seeds):
                code, result = reach(task, params, seed, args.opverify, workdir)
                seeds.append({"seed": seed, "passed": code == 0, "eco": eco_of(result)})
    except (OSError, ValueError, KeyError, TypeError, SyntaxError, ImportError, AttributeError,
            RuntimeError) as error:
        print(f"tf32_reach: {args.task}: {error}", file=sys.stderr)
        return 2
    reachable = all(s["passed"] for s in seeds)
    if args.json:
        print(json.dumps({"task": args.task, "params": params, "reachable": reachable, "seeds": seeds}))
    else:
        for s in seeds:
            print(f"seed {s['seed']}: {'passes' if s['passed'] else 'FAILS'}: eco matched "
                  f"{s['eco']['matched_ratio']:.4f}, over {s['eco']['over_count']}")
        print("within a TF32 computation's reach" if reachable else
              "OUT OF REACH: no TF32 computation passes this case (the inputs rounded once to TF32 already fail)")
    return 0 if reachable else 1


if __name__ == "__main__":
    sys.exit(main())
