#!/usr/bin/env bash
# Build and test on a GPU machine (the H200 image: Ubuntu 24.04, torch and
# triton in a venv), with valijson's headers carried in .carry/include.
# Writes at most 8 files to $OUT (or ./gpu-check-out); run folders go to
# $RUNS (default /tmp/opverify-gpu-runs).
# Usage: tools/gpu_check.sh build|compare|all|tests|gpu|batch|nights|two-nights|preload|override-bench|library|perf|perf-large|autotune-profile|sandbox|pytest FILE...|queue STEP...|watch [S]
# `all` is the one to verify a tree with: it builds if needed, then runs every GPU test and the
# library batches (ours, its planted defects, Liger-Kernel, FlagGems, flash-linear-attention) at once, and leaves at most
# 8 files in $OUT: build.txt, gpu-tests.txt, gpu_ops.jsonl, library.txt, library-flaggems.txt, verdicts.jsonl (one line
# per operator of every library batch, with its job, verdict, error and runtime types and first
# failures), cases.jsonl (every finished case of the batches, by job), and summaries.json (each batch's summary.json by job); it prints the tails.
# WORKERS=N runs the GPU tests with N pytest workers (default 4).
# LIBRARY_K=EXPR keeps only those library tests (pytest -k; all and library), e.g. "not flaggems"
# when the device time is short, "fla and not flaggems" for flash-linear-attention alone.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${OUT:-$root/gpu-check-out}
mkdir -p "$out" "${RUNS:-/tmp/opverify-gpu-runs}"  # the modes below write their logs there
build=$root/build-gpu
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# A night's totals, time split and executor starts (summary.json), on one line.
night_figures() {
  python3 -c 'import json, sys; s = json.load(open(sys.argv[1]))
print(json.dumps({k: s.get(k) for k in ("totals", "time_split", "executor_starts")}))' "$1" 2>&1
}
case "${1:-}" in
  build)
    # SRC, BUILD, JOBS_N and TESTS (ON/OFF) build another tree the same way (the compare mode's).
    src=${SRC:-$root} build=${BUILD:-$build} log=$out/$(basename "${BUILD:-build}").txt
    cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPVERIFY_WERROR=ON \
      -DOPVERIFY_BUILD_TESTS="${TESTS:-ON}" \
      -DPython3_EXECUTABLE="$(command -v python3)" -Dpybind11_DIR="$(python3 -m pybind11 --cmakedir)" \
      -DVALIJSON_INCLUDE_DIR="$root/.carry/include" > "$log" 2>&1 || { tail -30 "$log"; exit 1; }
    cmake --build "$build" -j "${JOBS_N:-$(nproc)}" >> "$log" 2>&1 || { grep -E "error|FAILED" "$log" | head -30; exit 1; }
    echo "build ok ($build)"
    ;;
  compare)
    # Before and after on the device: the source tree in $BEFORE (default .carry/before, made by
    # `git archive COMMIT | tar -x -C .carry/before`) is built into build-before beside build-gpu
    # (both at once where missing). jobs/all.json then runs $ROUNDS times (default 2) with each
    # build in turn (before, after, before, after; $COST_JOB another job), $RANKS ranks (default 4), the benchmark on and
    # nothing else running: the wall ratio comes from the same call. Then each job of $JOBS
    # (default: defects library) with both builds side by side, --no-bench. Each build runs its
    # own tree's job file. To $OUT: compare.txt (walls, ratio, each verdict diff from
    # tools/verdict_list.py) and compare.tgz (each run's summary.json, junit.xml, verdict list).
    # $BESIDE, a command, runs beside the verdict runs (its output in compare.tgz's beside.log).
    before=${BEFORE:-$root/.carry/before}
    runs=${RUNS:-/tmp/opverify-gpu-runs}/compare
    rm -rf "$runs"; mkdir -p "$runs"
    pids=()
    # Neither needs the C++ tests (the GPU tests are pytest against the binaries).
    [ -x "$build/runner/opverify-batch" ] || { TESTS=OFF JOBS_N=10 "$0" build & pids+=($!); }
    [ -x "$root/build-before/runner/opverify-batch" ] || \
      { SRC=$before BUILD=$root/build-before TESTS=OFF JOBS_N=6 "$0" build & pids+=($!); }
    [ ${#pids[@]} -gt 0 ] && wait "${pids[@]}"
    [ -x "$build/runner/opverify-batch" ] && [ -x "$root/build-before/runner/opverify-batch" ] || exit 1
    report=$out/compare.txt
    one() {  # one() SIDE JOB NAME [FLAGS...]: a run of jobs/JOB.json with SIDE's build and tree
      local side=$1 job=$2 name=$3; shift 3
      local tree=$root bin=$build
      [ "$side" = before ] && tree=$before bin=$root/build-before
      local t0; t0=$(date +%s.%N)
      mpirun -np "${RANKS:-4}" --oversubscribe --bind-to none "$bin/runner/opverify-batch" "$tree/jobs/$job.json" \
        --run-dir "$runs/$name" "$@" > "$runs/$name.log" 2>&1
      local rc=$?
      python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$t0" "$(date +%s.%N)" > "$runs/$name.wall"
      echo "$name rc=$rc wall=$(cat "$runs/$name.wall") s" >> "$report"
      python3 "$root/tools/verdict_list.py" "$runs/$name" > "$runs/$name.verdicts" 2>&1
    }
    for round in $(seq 1 "${ROUNDS:-2}"); do
      one before "${COST_JOB:-all}" "all-before-$round"
      one after "${COST_JOB:-all}" "all-after-$round"
    done
    python3 - "$runs" "${ROUNDS:-2}" >> "$report" <<'PY'
import json, os, statistics, sys
runs, rounds = sys.argv[1], int(sys.argv[2])
walls = {}
for side in ("before", "after"):
    for r in range(1, rounds + 1):
        try:
            s = json.load(open(os.path.join(runs, f"all-{side}-{r}", "summary.json")))
        except (OSError, ValueError) as e:
            print(f"all-{side}-{r}: no summary ({e})"); continue
        wall = float(open(os.path.join(runs, f"all-{side}-{r}.wall")).read())
        walls.setdefault(side, []).append(wall)
        print(f"all-{side}-{r}: wall {wall} s (mpirun to exit), run_wall_s {s.get('timing', {}).get('run_wall_s')}, "
              f"totals {s.get('totals')}, time_split {json.dumps(s.get('time_split'))}")
if all(walls.get(k) and None not in walls[k] for k in ("before", "after")):
    b, a = statistics.median(walls["before"]), statistics.median(walls["after"])
    print(f"cost job wall, median of {rounds}: before {b:.1f} s, after {a:.1f} s, after/before {a / b:.3f}")
PY
    pids=()
    # $BESIDE, a command (e.g. another mode of this script), runs beside the verdict runs.
    [ -n "${BESIDE:-}" ] && { bash -c "$BESIDE" > "$runs/beside.log" 2>&1 & pids+=($!); }
    for job in ${JOBS:-defects library}; do
      for side in before after; do
        one "$side" "$job" "$job-$side" --no-bench & pids+=($!)
      done
    done
    wait "${pids[@]}"
    for job in all ${JOBS:-defects library}; do
      b=$job-before a=$job-after
      [ "$job" = all ] && b=all-before-1 a=all-after-1
      echo "== verdicts $job: $b against $a" >> "$report"
      python3 "$root/tools/verdict_list.py" --diff "$runs/$b" "$runs/$a" >> "$report" 2>&1
    done
    [ -f "$runs/beside.log" ] && { echo "== beside: $BESIDE"; tail -8 "$runs/beside.log"; } >> "$report"
    (cd "$runs" && tar czf "$out/compare.tgz" --ignore-failed-read ./*.log ./*.wall ./*.verdicts ./*/summary.json ./*/junit.xml 2>/dev/null)
    cat "$report"
    ;;
  all)
    [ -x "$build/runner/opverify-batch" ] || "$0" build || exit 1
    start=$(date +%s) library_pids=()
    # The GPU tests of every file that has them, and the library batches beside them (one
    # device; the batches' ranks and the tests' workers share it and the host's cores).
    ( OPVERIFY_BUILD_DIR=$build OPVERIFY_GPU_REPORT=$out/gpu_ops.jsonl python3 -m pytest -n "${WORKERS:-4}" -q -p no:cacheprovider -rs --durations=25 \
        "$root/tests/python/test_gpu_ops.py" "$root/tests/python/test_npu_standin.py" \
        "$root/tests/python/test_adversarial.py" "$root/tests/python/test_library.py" \
        "$root/tests/python/test_reference_trust.py" -k "gpu or ghost or cuda or npu" \
        > "$out/gpu-tests.txt" 2>&1; echo "gpu tests rc=$? after $(( $(date +%s) - start )) s" >> "$out/gpu-tests.txt" ) &
    tests_pid=$!
    # FlagGems' batch (the longest) beside the other libraries' rather than after them.
    for part in flaggems others; do
      select="flaggems" log=$out/library-flaggems.txt
      [ "$part" = others ] && select="not flaggems" log=$out/library.txt
      ( OPVERIFY_BUILD_DIR=$build OPVERIFY_LIBRARY_RANKS=${RANKS:-4} OPVERIFY_FLAGGEMS_RANKS=${FLAGGEMS_RANKS:-8} \
          OPVERIFY_LIBRARY_OUT=$out python3 -m pytest -q -p no:cacheprovider -rs -k "$select${LIBRARY_K:+ and ($LIBRARY_K)}" \
          "$root/tests/python/test_gpu_library.py" "$root/tests/python/test_fla.py" \
          > "$log" 2>&1; echo "library ($select) rc=$? after $(( $(date +%s) - start )) s" >> "$log" ) &
      library_pids+=($!)
    done
    wait $tests_pid "${library_pids[@]}"
    python3 - "$out" <<'PY'
import glob, json, os, sys
out = sys.argv[1]
with open(os.path.join(out, "verdicts.jsonl"), "w") as merged:
    for path in sorted(glob.glob(os.path.join(out, "verdicts-*.jsonl"))):
        merged.write(open(path).read())
        os.remove(path)
with open(os.path.join(out, "cases.jsonl"), "w") as merged:  # the batches' --progress streams, by job
    for path in sorted(glob.glob(os.path.join(out, "cases-*.jsonl"))):
        job = os.path.basename(path)[len("cases-"):-len(".jsonl")]
        for line in open(path):
            try:
                merged.write(json.dumps(dict(json.loads(line), job=job)) + "\n")
            except ValueError:
                pass  # a line cut short by a stopped batch
        os.remove(path)
summaries = {}
for path in sorted(glob.glob(os.path.join(out, "summary-*.json"))):
    summaries[os.path.basename(path)[len("summary-"):-len(".json")]] = json.load(open(path))
    os.remove(path)
json.dump(summaries, open(os.path.join(out, "summaries.json"), "w"), indent=1)
PY
    { echo "== gpu tests"; tail -25 "$out/gpu-tests.txt"; echo "== library batches"; tail -30 "$out/library.txt"
      echo "== FlagGems"; tail -20 "$out/library-flaggems.txt"; }
    ;;
  tests)
    (cd "$build" && ctest -j 12 -E "python.gpu_(ops|library)" --output-on-failure > "$out/ctest.txt" 2>&1); echo "ctest rc=$?"
    tail -6 "$out/ctest.txt"
    OPVERIFY_BUILD_DIR=$build OPVERIFY_GPU_REPORT=$out/gpu_ops.jsonl python3 -m pytest -n 8 -q -p no:cacheprovider \
      "$root/tests/python/test_gpu_ops.py" > "$out/gpu_ops.txt" 2>&1; echo "gpu_ops rc=$?"
    tail -15 "$out/gpu_ops.txt"
    ;;
  gpu)
    # The GPU tests alone: every operator of jobs/ops and defect of jobs/defects, and the
    # adversarial fixtures that need the device.
    OPVERIFY_BUILD_DIR=$build OPVERIFY_GPU_REPORT=$out/gpu_ops.jsonl python3 -m pytest -n 8 -q -p no:cacheprovider \
      "$root/tests/python/test_gpu_ops.py" > "$out/gpu_ops.txt" 2>&1; echo "gpu_ops rc=$?"
    tail -15 "$out/gpu_ops.txt"
    OPVERIFY_BUILD_DIR=$build python3 -m pytest -q -p no:cacheprovider -k "gpu or ghost" \
      "$root/tests/python/test_adversarial.py" > "$out/adversarial.txt" 2>&1; echo "adversarial rc=$?"
    tail -30 "$out/adversarial.txt"
    ;;
  batch)
    n=$(nvidia-smi -L | wc -l)
    runs=${RUNS:-/tmp/opverify-gpu-runs}
    rm -rf "$runs"
    for job in ${JOBS:-all defects}; do
      echo "=== $job: $n ranks" >> "$out/batch.txt"
      flags=()
      [ "$job" = defects ] && flags=(--no-bench)  # nothing there passes: no performance phase
      mpirun -np "$n" --bind-to none "$build/runner/opverify-batch" "$root/jobs/$job.json" --run-dir "$runs/$job" \
        "${flags[@]}" >> "$out/batch.txt" 2>&1; echo "batch $job ($n ranks) rc=$?"
      tail -2 "$out/batch.txt"
      cp "$runs/$job/summary.json" "$out/summary-$job.json" 2>/dev/null
      [ -f "$runs/$job/ops/softmax/perf_result.json" ] && cp "$runs/$job/ops/softmax/perf_result.json" "$out/perf-softmax.json"
    done
    ;;
  nights)
    # Library nights as a user runs them, side by side on the one device: each job of $JOBS
    # (default: flaggems_override flaggems_library) through mpirun with $RANKS_<job> or $RANKS ranks (default 8),
    # $FLAGS added (e.g. --no-bench), each stopped by --time-limit $LIMIT (default 480 s); per job to $OUT:
    # cases-<job>.jsonl (the --progress jsonl stream), summary-<job>.json, report-<job>.md, night-<job>.txt
    # (the console, then tools/tag_check.py's reading of the night against the job file's tags).
    # RESUME=1 goes on with each job's run folder of an earlier `nights` (--resume) instead of a new one.
    runs=${RUNS:-/tmp/opverify-gpu-runs}
    pids=()
    resume=()
    [ -n "${RESUME:-}" ] && resume=(--resume)
    for job in ${JOBS:-flaggems_override flaggems_library}; do
      [ -n "${RESUME:-}" ] || rm -rf "$runs/$job"
      ranks_var="RANKS_$job"  # a job's own rank count, e.g. RANKS_liger_release=4
      # --time-limit stops the ranks themselves (reports written); a TERM through mpirun would
      # not leave rank 0 the time to write them. The timeout is the backstop.
      ( timeout -s TERM "$(( ${LIMIT:-480} + 90 ))" mpirun -np "${!ranks_var:-${RANKS:-8}}" --oversubscribe --bind-to none "$build/runner/opverify-batch" \
          "$root/jobs/$job.json" --run-dir "$runs/$job" --progress "jsonl=$out/cases-$job.jsonl" --time-limit "${LIMIT:-480}" "${resume[@]}" ${FLAGS:-} \
          > "$out/night-$job.txt" 2>&1
        echo "night $job rc=$?" >> "$out/night-$job.txt"
        # The night against the job file's tags (unexplained failures, stale tags), at its end.
        python3 "$root/tools/tag_check.py" "$root/jobs/$job.json" "$out/cases-$job.jsonl" >> "$out/night-$job.txt" 2>&1
        cp "$runs/$job/summary.json" "$out/summary-$job.json" 2>/dev/null
        cp "$runs/$job/report.md" "$out/report-$job.md" 2>/dev/null ) &
      pids+=($!)
    done
    wait "${pids[@]}"
    for f in "$out"/night-*.txt; do echo "== $f"; grep -E '^(UNEXPLAINED|MISSED|STALE) ' "$f" | head -20; tail -5 "$f"; done
    ;;
  preload)
    # A library night with neither of the start-up cuts and with both (docs/PERFORMANCE.md, "The
    # library preloaded by the spares", "The library's bytecode"), in turn, $ROUNDS times (default
    # 1), each starting without the library's bytecode: $JOB (default liger_release) with $RANKS
    # ranks (default 8), --no-bench unless $FLAGS says otherwise, each stopped by --time-limit
    # $LIMIT (default 240 s). To $OUT: preload.txt (walls, each summary's executor_starts and
    # time_split, the verdict diff) and preload.tgz (the logs, summaries and junit files).
    [ -x "$build/runner/opverify-batch" ] || "$0" build || exit 1
    runs=${RUNS:-/tmp/opverify-gpu-runs}
    job=${JOB:-liger_release}
    report=$out/preload.txt
    : > "$report"
    for round in $(seq 1 "${ROUNDS:-1}"); do
      for mode in neither both; do
        run=$runs/$mode-$round
        rm -rf "$run"
        find "$root/jobs" -path '*/src/*' -name __pycache__ -prune -exec rm -rf {} +
        off=0; [ "$mode" = neither ] && off=1
        begin=$(date +%s)
        OPVERIFY_NO_PRELOAD=$off OPVERIFY_NO_BYTECODE=$off mpirun -np "${RANKS:-8}" --oversubscribe --bind-to none \
          -x OPVERIFY_NO_PRELOAD -x OPVERIFY_NO_BYTECODE "$build/runner/opverify-batch" "$root/jobs/$job.json" \
          --run-dir "$run" --time-limit "${LIMIT:-240}" ${FLAGS:---no-bench} > "$runs/$mode-$round.log" 2>&1
        echo "$mode round $round: rc=$? wall $(( $(date +%s) - begin )) s" >> "$report"
        night_figures "$run/summary.json" >> "$report"
      done
      python3 "$root/tools/verdict_list.py" --diff "$runs/neither-$round" "$runs/both-$round" >> "$report" 2>&1
    done
    (cd "$runs" && tar czf "$out/preload.tgz" --ignore-failed-read ./*.log ./*/summary.json ./*/junit.xml 2>/dev/null)
    cat "$report"
    ;;
  two-nights)
    # Issue 23's nights in one call: $JOB (default flaggems_override) twice on one --cache-dir and
    # one --history, as a nightly sweep runs (night two on night one's caches, planned from its times), with $RANKS ranks (default 12), $FLAGS added (default
    # "--no-bench --dtype float32": about 260 cases of all 199 operators, so that both nights and
    # the build fit one device call), each stopped by --time-limit $LIMIT (default 200 s). To $OUT:
    # nights.txt (walls; each summary's totals, time_split and executor_starts; the verdict diff)
    # and nights.tgz (the logs, summaries and junit files).
    [ -x "$build/runner/opverify-batch" ] || "$0" build || exit 1
    runs=${RUNS:-/tmp/opverify-gpu-runs}
    job=${JOB:-flaggems_override}
    report=$out/nights.txt
    : > "$report"
    rm -rf "$runs/cache" "$runs/night-1" "$runs/night-2" "$runs/history.jsonl"
    for night in 1 2; do
      begin=$(date +%s)
      # shellcheck disable=SC2086 # FLAGS is a list of flags
      mpirun -np "${RANKS:-12}" --oversubscribe --bind-to none "$build/runner/opverify-batch" "$root/jobs/$job.json" \
        --run-dir "$runs/night-$night" --cache-dir "$runs/cache" --history "$runs/history.jsonl" --time-limit "${LIMIT:-200}" \
        ${FLAGS:---no-bench --dtype float32} > "$runs/night-$night.log" 2>&1
      echo "night $night: rc=$? wall $(( $(date +%s) - begin )) s" >> "$report"
      night_figures "$runs/night-$night/summary.json" >> "$report"
    done
    python3 "$root/tools/verdict_list.py" --diff "$runs/night-1" "$runs/night-2" >> "$report" 2>&1
    (cd "$runs" && tar czf "$out/nights.tgz" --ignore-failed-read ./night-*.log ./night-*/summary.json ./night-*/junit.xml 2>/dev/null)
    cat "$report"
    ;;
  override-bench)
    # Override benchmarks against do_bench and the ghost replay on a real library's launches
    # (tools/override_check.py): $OPS of $JOB (default ten FlagGems override operators) with
    # the benchmark and the ghost replay on, one seed, $RANKS ranks (default 4), --time-limit $LIMIT
    # (default 150 s). To $OUT: override-bench.txt (verdicts, each shape's latency against
    # do_bench's) and override-bench.json. GHOST=0: the benchmark alone, no ghost replay.
    [ -x "$build/runner/opverify-batch" ] || "$0" build || exit 1
    runs=${RUNS:-/tmp/opverify-gpu-runs}
    job=${JOB:-flaggems_override}
    check=$root/jobs/_check_$job.json
    python3 "$root/tools/override_check.py" prepare "$root/jobs/$job.json" "$check" \
      --ops "${OPS:-abs,exp,add,gelu,silu,softmax,layer_norm,cumsum,addmm,bmm}" \
      $([ "${GHOST:-1}" = 0 ] && echo --no-ghost) || exit 1
    rm -rf "$runs/override-bench"
    mpirun -np "${RANKS:-4}" --oversubscribe --bind-to none "$build/runner/opverify-batch" "$check" \
      --run-dir "$runs/override-bench" --time-limit "${LIMIT:-150}" --no-ab > "$out/override-bench.log" 2>&1
    echo "batch rc=$?" >> "$out/override-bench.log"
    python3 "$root/tools/override_check.py" report "$runs/override-bench" --json "$out/override-bench.json" \
      > "$out/override-bench.txt" 2>&1; echo "report rc=$?" >> "$out/override-bench.txt"
    tail -3 "$out/override-bench.log"; cat "$out/override-bench.txt"
    ;;
  library)
    # The real libraries (docs/LIBRARIES.md): jobs/library.json, jobs/library_defects.json,
    # jobs/liger.json, jobs/flaggems_override.json and jobs/fla.json (each skipped without its source
    # in jobs/*/src) through tests/python/test_gpu_library.py and test_fla.py, each batch with $RANKS ranks (default 4, sharing the
    # device; FlagGems with $FLAGGEMS_RANKS, default 8); summaries and verdict tables to $OUT.
    OPVERIFY_BUILD_DIR=$build OPVERIFY_LIBRARY_RANKS=${RANKS:-4} OPVERIFY_FLAGGEMS_RANKS=${FLAGGEMS_RANKS:-8} \
      OPVERIFY_LIBRARY_OUT=$out python3 -m pytest -q -p no:cacheprovider -rs ${LIBRARY_K:+-k "$LIBRARY_K"} \
      "$root/tests/python/test_gpu_library.py" "$root/tests/python/test_fla.py" \
      > "$out/library.txt" 2>&1
    echo "library rc=$?"; tail -40 "$out/library.txt"
    ;;
  sandbox)
    # An executor inside the sandbox with CUDA (the image has no bwrap: auto takes unshare), then
    # the hostile fixtures (tests/python/test_sandbox.py).
    work=$(mktemp -d)
    cp "$root"/jobs/ops/softmax_* "$work"/
    "$build/runner/opverify" verify --op_name softmax --verify_dir "$work" --triton_impl_name triton_impl \
      --output "$out/sandbox-softmax.json" > "$out/sandbox.txt" 2>&1; echo "verify softmax rc=$?"
    python3 -c "import json,sys; e=json.load(open(sys.argv[1]))['environment']; print('sandbox', e.get('sandbox'), \
'device', e['device'].get('name'))" "$out/sandbox-softmax.json"
    grep -h "opverify-executor starting" "$out"/sandbox-softmax.executor.log 2>/dev/null | sort | uniq -c
    OPVERIFY_BUILD_DIR=$build python3 -m pytest -q -p no:cacheprovider -rs ${SANDBOX_K:+-k "$SANDBOX_K"} \
      "$root/tests/python/test_sandbox.py" \
      >> "$out/sandbox.txt" 2>&1; echo "test_sandbox rc=$?"; tail -20 "$out/sandbox.txt"
    rm -rf "$work"
    ;;
  pytest)
    # Named pytest files against this build, e.g. tools/gpu_check.sh pytest tests/python/test_npu_standin.py
    shift
    OPVERIFY_BUILD_DIR=$build python3 -m pytest -q -p no:cacheprovider -rs "$@" > "$out/pytest.txt" 2>&1
    echo "pytest rc=$?"; tail -40 "$out/pytest.txt"
    ;;
  perf)
    python3 "$root/perf/bench_accuracy.py" --build "$build" --out "$out" > "$out/bench_accuracy.txt" 2>&1
    echo "bench_accuracy rc=$?"; tail -40 "$out/bench_accuracy.txt"
    ;;
  autotune-profile)
    # The runtime evidence's reading of an autotuning forward's profile (key_averages()) against
    # a tally of the profiler's raw events, on $CONFIGS configurations (default 24;
    # perf/autotune_profile.py), no build needed. To $OUT: autotune-profile.txt and autotune-profile.json.
    PYTHONPATH=$root/runner/executor python3 "$root/perf/autotune_profile.py" --configs "${CONFIGS:-24}" \
      --json "$out/autotune-profile.json" > "$out/autotune-profile.txt" 2>&1
    echo "autotune_profile rc=$?"; grep -v Warning "$out/autotune-profile.txt" | tail -6
    ;;
  perf-large)
    # The batch on jobs/perf_large.json (device-bound sizes) against do_bench.
    mkdir -p "$out/large"
    python3 "$root/perf/bench_accuracy.py" --build "$build" --job "$root/jobs/perf_large.json" --out "$out/large" \
      > "$out/large/bench_accuracy.txt" 2>&1
    echo "bench_accuracy (perf_large) rc=$?"; tail -30 "$out/large/bench_accuracy.txt"
    ;;
  queue)
    # Steps that together outlast one device call (10 minutes a command): they run one after
    # another in a process session of their own (setsid), which lives on while the machine is held,
    # that is while the next call comes within the machine's idle release. Each argument is a step,
    # 'NAME: COMMAND' (COMMAND run by bash in a copy of the tree taken now, $QUEUE/tree, so that
    # the next call's copy of the working tree changes nothing under a running step; its $OUT
    # $QUEUE/NN-NAME). $QUEUE (default /tmp/opverify-queue) keeps queue.log (each step's start,
    # end and rc) and `done` once every step has ended. `watch` follows it. E.g.
    #   tools/gpu_check.sh queue 'build: tools/gpu_check.sh build' 'all: tools/gpu_check.sh all'
    q=${QUEUE:-/tmp/opverify-queue}
    shift
    rm -rf "$q"; mkdir -p "$q/tree"
    tar -C "$root" --exclude='./build*' --exclude=./.git --exclude=./.carry/before -cf - . \
      | tar -C "$q/tree" -xf - || exit 1
    root=$q/tree
    printf '%s\n' "$@" > "$q/steps"
    # shellcheck disable=SC2016 # expanded by the queue's own bash
    setsid nohup bash -c '
      q=$1 root=$2 i=0
      while IFS= read -r step; do
        i=$((i + 1)); name=${step%%:*} command=${step#*:}
        dir=$(printf "%s/%02d-%s" "$q" "$i" "$name"); mkdir -p "$dir"
        begin=$(date +%s); echo "$(date +%T) start $name:$command" >> "$q/queue.log"
        (cd "$root" && OUT=$dir bash -c "$command") < /dev/null > "$dir/step.txt" 2>&1  # not the steps file: mpirun reads its stdin
        rc=$?
        echo "$(date +%T) end $name rc=$rc after $(( $(date +%s) - begin )) s" >> "$q/queue.log"
      done < "$q/steps"
      touch "$q/done"' queue "$q" "$root" > "$q/runner.txt" 2>&1 < /dev/null &
    echo "queue of $# steps started in $q"
    ;;
  watch)
    # Waits up to $2 seconds (default 540) for the queue to end, then prints queue.log and the
    # running step's last lines, and packs everything the steps wrote to $OUT/queue.tgz (what
    # one call brings back, whether or not the queue has ended).
    # With .carry/queue-rest (steps, one a line) the steps not yet started are replaced by those,
    # once: the queue's loop reads its steps file as it goes, so the lines already started are
    # rewritten byte for byte and the loop reads on from the first new one.
    q=${QUEUE:-/tmp/opverify-queue}
    rest=$root/.carry/queue-rest
    if [ -f "$rest" ] && [ ! -f "$q/done" ] && [ ! -f "$q/rest-taken" ] && [ -f "$q/steps" ]; then
      started=$(grep -c ' start ' "$q/queue.log" 2>/dev/null)
      { head -n "$started" "$q/steps"; cat "$rest"; } > "$q/steps.new" && cat "$q/steps.new" > "$q/steps"
      cp "$rest" "$q/rest-taken"; echo "queue: the steps after step $started replaced by those of $rest"
    fi
    deadline=$(( $(date +%s) + ${2:-540} ))
    while [ ! -f "$q/done" ] && [ "$(date +%s)" -lt "$deadline" ]; do sleep 5; done
    cat "$q/queue.log" 2>/dev/null
    [ -f "$q/done" ] && echo "queue done" || { echo "queue running"; last=$(ls -d "$q"/[0-9]*/ 2>/dev/null | tail -1)
      [ -n "$last" ] && tail -n 5 "$last"/*.txt; }
    tar czf "$out/queue.tgz" -C "$q" --exclude=./tree . 2>/dev/null
    ;;
  *) echo "usage: tools/gpu_check.sh build|compare|all|tests|gpu|batch|nights|two-nights|preload|override-bench|library|perf|perf-large|sandbox|pytest FILE...|queue STEP...|watch [S]" >&2; exit 2 ;;
esac
