#!/usr/bin/env bash
# Builds opverify (Release) and runs the judge throughput benchmark.
# Usage: perf/run_judge_bench.sh [judge_throughput.py flags]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${OPVERIFY_BENCH_BUILD:-$root/build-bench}
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DOPVERIFY_BUILD_TESTS=OFF \
  -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$build" --target opverify_python >/dev/null
PYTHONPATH="$build/python" exec /usr/bin/python3 "$root/perf/judge_throughput.py" "$@"
