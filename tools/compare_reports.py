#!/usr/bin/python3
"""Runs a CPU job with two builds of opverify-batch and checks that their
reports are the same: the proof that a refactoring changed no behaviour.

    tools/compare_reports.py run BUILD JOB RUN_DIR [--ranks N]
    tools/compare_reports.py compare RUN_A RUN_B
    tools/compare_reports.py both BUILD_A BUILD_B JOB WORK_DIR [--ranks N]

BUILD is a build folder (its runner/opverify-batch runs, with the
opverify-executor beside it); JOB a manifest, e.g. jobs/cpu_smoke.json or
jobs/cpu_mixed.json, run on the cpu backend; without --ranks as one rank
without MPI (README.md: run directly, one rank does everything), with
--ranks N under `mpirun -np N --oversubscribe`. `both` runs A into
WORK_DIR/a and B into WORK_DIR/b and compares them. Exit 0 when every file
is identical after normalisation, 1 with a unified diff of each that is not.

Compared, when either run has them: summary.json, junit.xml, report.md,
report.html, plan.json, selection.json, every ops/<op>/verify_result.json,
perf_result.json and precision_report.md, the rows of results.h5's index
(dumped as text), and the program's exit code. The same set of files must
exist on both sides.

Normalised (each replaced by a placeholder on both sides), and nothing else:
- the run folder's absolute path -> <RUN> (two runs need two folders);
- the A/B's fresh cache folders, made by mkdtemp ("fresh_0ePSZf") ->
  fresh_<TMP>;
- the build's git commit (summary.json's opverify.commit, also in
  report.md, report.html and junit.xml) -> <COMMIT> (the "after" build is a
  later commit by construction);
- in JSON: the value of every key that holds a wall time, a duration or a
  measured latency: keys ending in _ms or _s (except configuration:
  timeout_s, warmup_timeout_s, max_seconds, freq_check_interval_s), the
  timeline and time_split objects, `rse`, `idle_fraction`; timestamps
  (`timestamp`, `started_at`, `stored_at`); benchmark results, which are
  measured each run: every key holding `speedup` (but `review_speedup`, a
  setting), `fast_p`'s fractions, the memory a side allocated
  (`peak_memory_mb`, `added_memory_mb`: on cpu_mixed.json relu_ok's
  framework side read 0.0625 MB in a base run and in a run of the carved
  build, then 0.078125 MB in a second run of the carved build whose code
  differs from the first only by removed #include lines), the profiler's
  per-operator times (an `operators` object whose values are all numbers:
  its times, and also which operators it caught, vary from run to run);
- pids and host names (keys `pid`, `host`, `hostname`) where they appear;
- in results.h5's rows: the columns holding timings, times and the
  timestamp (wall_ms, stored_at, ...: by the same key rules);
- in junit.xml: every `time="..."` attribute and the values of the
  latency_ms, framework_latency_ms and speedup properties;
- in report.md, report.html and precision_report.md: a number directly
  followed by a time unit, with its unit (which follows the duration's
  size: "58.1 s" in one run is "1.1 min" in the next) -> <TIME>, a
  speedup's number ("0.62x" -> <N>x), "01:16" clock durations, and
  `fast_P V` fractions;
- in report.html besides: the speedup chart and the timeline (two SVGs
  drawn from measured speedups and times) each as a whole, the latencies
  of the "latency per shape" cells ("#1 0.0124"), and the order of the
  "Slowest operators" table's rows (ordered by measured speedup: compared
  sorted).
Everything else must be byte-identical.
"""
import argparse
import difflib
import json
import os
import re
import subprocess
import sys

MPI_ENV = {"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
           "OMPI_MCA_rmaps_base_oversubscribe": "1"}
# Keys ending in _s / _ms that are settings, not measurements: kept.
SETTINGS = {"timeout_s", "warmup_timeout_s", "max_seconds", "freq_check_interval_s", "review_speedup"}
TIMESTAMPS = {"timestamp", "started_at", "stored_at", "pid", "host", "hostname"}
MEMORY = {"peak_memory_mb", "added_memory_mb"}
WHOLE_TIMING = {"timeline", "time_split", "rse", "idle_fraction", "fast_p"}
REPORT_FILES = ["summary.json", "junit.xml", "report.md", "report.html", "plan.json", "selection.json"]
OP_FILES = ["verify_result.json", "perf_result.json", "precision_report.md"]


def measured_key(key):
    """Whether a JSON key holds a time, a timestamp or a benchmark measurement."""
    if not isinstance(key, str) or key in SETTINGS:
        return False
    return (key in TIMESTAMPS or key in WHOLE_TIMING or key in MEMORY or key.endswith("_ms") or key.endswith("_s")
            or "speedup" in key)


def placeholder(value):
    return "<MEASURED>" if value is not None else None


def normalise_json(value, run_dir, commit):
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if measured_key(key):
                out[key] = placeholder(item)
            elif key == "operators" and isinstance(item, dict) and item and all(
                    isinstance(v, (int, float)) for v in item.values()):
                out[key] = "<PROFILE>"  # the profiler's per-operator times, and which it caught
            elif key == "commit" and item == commit:
                out[key] = "<COMMIT>"
            else:
                out[key] = normalise_json(item, run_dir, commit)
        return out
    if isinstance(value, list):
        return [normalise_json(item, run_dir, commit) for item in value]
    if isinstance(value, str):
        return normalise_text(value, run_dir, commit)
    return value


def normalise_text(text, run_dir, commit):
    text = text.replace(run_dir, "<RUN>")
    text = re.sub(r"\bfresh_[A-Za-z0-9]{6}\b", "fresh_<TMP>", text)  # the A/B's mkdtemp folder
    if commit:
        text = re.sub(r"\b%s\b" % re.escape(commit), "<COMMIT>", text)
    return text


NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"


def normalise_report_text(text, run_dir, commit):
    """report.md, report.html, precision_report.md: measured numbers by their unit."""
    text = normalise_text(text, run_dir, commit)
    text = re.sub(NUMBER + r"\s?(ms|us|µs|s|min|h)\b", "<TIME>", text)  # the unit follows the size
    text = re.sub(NUMBER + r"x\b", "<N>x", text)
    text = re.sub(r"\b\d\d:\d\d(:\d\d)?\b", "<CLOCK>", text)
    text = re.sub(r"(fast_\d+\.\d+:? )" + NUMBER, r"\1<N>", text)
    return text


def normalise_html(text, run_dir, commit):
    text = re.sub(r'<svg class="chart" id="speedup-chart".*?</svg>', "<SPEEDUP-CHART>", text, flags=re.S)
    text = re.sub(r'<svg class="timeline".*?</svg>', "<TIMELINE>", text, flags=re.S)
    text = re.sub(r"(#\d+ )" + NUMBER, r"\1<N>", text)
    text = normalise_report_text(text, run_dir, commit)

    def sorted_rows(match):
        rows = match.group(2).splitlines(True)
        return match.group(1) + "".join(sorted(rows)) + match.group(3)

    return re.sub(r'(<table id="slowest">\n<tr><th>[^\n]*\n)(.*?)(</table>)', sorted_rows, text, flags=re.S)


def normalise_junit(text, run_dir, commit):
    text = normalise_text(text, run_dir, commit)
    text = re.sub(r'time="[^"]*"', 'time="<T>"', text)
    return re.sub(r'(<property name="(?:latency_ms|framework_latency_ms|speedup)" value=)"[^"]*"',
                  r'\1"<MEASURED>"', text)


def dump_results_index(path, run_dir, commit):
    """results.h5's rows as text lines, their measured columns normalised."""
    import h5py  # only here: the rest runs without it
    lines = []
    with h5py.File(path, "r") as f:
        def visit(name, obj):
            if not isinstance(obj, h5py.Dataset):
                return
            lines.append("dataset %s %s %s" % (name, obj.shape, obj.dtype))
            data = obj[()]
            names = obj.dtype.names or ()
            rows = data if obj.shape else [data]
            for row in rows:
                if names:
                    fields = []
                    for column in names:
                        cell = row[column]
                        cell = cell.decode("utf-8", "replace") if isinstance(cell, bytes) else cell
                        if measured_key(column):
                            cell = "<MEASURED>"
                        elif isinstance(cell, str) and cell.startswith(("{", "[")):
                            try:
                                cell = json.dumps(normalise_json(json.loads(cell), run_dir, commit),
                                                  sort_keys=True)
                            except ValueError:
                                pass
                        fields.append("%s=%s" % (column, normalise_text(str(cell), run_dir, commit)))
                    lines.append("  " + " | ".join(fields))
                else:
                    lines.append("  " + normalise_text(repr(row), run_dir, commit))
        f.visititems(visit)
    return "\n".join(lines) + "\n"


def run_commit(run_dir):
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            return json.load(f).get("opverify", {}).get("commit", "")
    except (OSError, ValueError):
        return ""


def normalised(run_dir, relative):
    """The file's text with what differs between two runs replaced."""
    run_dir = os.path.abspath(run_dir)
    path = os.path.join(run_dir, relative)
    commit = run_commit(run_dir)
    if relative == "results.h5":
        return dump_results_index(path, run_dir, commit)
    if relative == "exit_code":
        with open(path) as f:
            return f.read()
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        text = f.read()
    if relative.endswith(".json"):
        return json.dumps(normalise_json(json.loads(text), run_dir, commit), indent=1) + "\n"
    if relative.endswith(".xml"):
        return normalise_junit(text, run_dir, commit)
    if relative.endswith(".html"):
        return normalise_html(text, run_dir, commit)
    return normalise_report_text(text, run_dir, commit)


def compared_files(run_dir):
    files = [name for name in REPORT_FILES + ["results.h5", "exit_code"]
             if os.path.isfile(os.path.join(run_dir, name))]
    ops = os.path.join(run_dir, "ops")
    if os.path.isdir(ops):
        for op in sorted(os.listdir(ops)):
            for name in OP_FILES:
                if os.path.isfile(os.path.join(ops, op, name)):
                    files.append(os.path.join("ops", op, name))
    return files


def compare(run_a, run_b):
    """0 when both runs' reports are the same after normalisation; prints each difference."""
    files_a, files_b = compared_files(run_a), compared_files(run_b)
    status = 0
    if files_a != files_b:
        print("different files: only in %s: %s; only in %s: %s" % (
            run_a, sorted(set(files_a) - set(files_b)), run_b, sorted(set(files_b) - set(files_a))))
        status = 1
    for relative in sorted(set(files_a) & set(files_b)):
        text_a, text_b = normalised(run_a, relative), normalised(run_b, relative)
        if text_a == text_b:
            print("same       %s" % relative)
            continue
        status = 1
        print("DIFFERENT  %s" % relative)
        sys.stdout.writelines(difflib.unified_diff(
            text_a.splitlines(True), text_b.splitlines(True), "a/" + relative, "b/" + relative, n=2))
    print("compare %s %s: %s (%d files)" % (run_a, run_b, "identical" if status == 0 else "DIFFERENT",
                                            len(set(files_a) & set(files_b))))
    return status


def run(build, job, run_dir, ranks=None):
    """Runs BUILD's opverify-batch on JOB (cpu backend) into a new RUN_DIR; its exit code goes to RUN_DIR/exit_code."""
    if os.path.exists(run_dir):
        sys.exit("%s exists: give a new run folder" % run_dir)
    command = [os.path.join(os.path.abspath(build), "runner", "opverify-batch"), os.path.abspath(job),
               "--backend", "cpu", "--run-dir", os.path.abspath(run_dir)]
    if ranks:
        command = ["mpirun", "-np", str(ranks), "--oversubscribe", *command]
    proc = subprocess.run(command, env=dict(os.environ, **MPI_ENV), capture_output=True, text=True)
    os.makedirs(run_dir, exist_ok=True)
    with open(os.path.join(run_dir, "exit_code"), "w") as f:
        f.write("%d\n" % proc.returncode)
    with open(os.path.join(run_dir, "console.txt"), "w") as f:  # for reading, not compared
        f.write(proc.stdout + proc.stderr)
    print("%s %s -> %s: exit %d" % (build, job, run_dir, proc.returncode))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("run")
    one.add_argument("build")
    one.add_argument("job")
    one.add_argument("run_dir")
    one.add_argument("--ranks", type=int)
    two = sub.add_parser("compare")
    two.add_argument("run_a")
    two.add_argument("run_b")
    both = sub.add_parser("both")
    both.add_argument("build_a")
    both.add_argument("build_b")
    both.add_argument("job")
    both.add_argument("work_dir")
    both.add_argument("--ranks", type=int)
    args = parser.parse_args()
    if args.command == "run":
        run(args.build, args.job, args.run_dir, args.ranks)
        return 0
    if args.command == "compare":
        return compare(args.run_a, args.run_b)
    run(args.build_a, args.job, os.path.join(args.work_dir, "a"), args.ranks)
    run(args.build_b, args.job, os.path.join(args.work_dir, "b"), args.ranks)
    return compare(os.path.join(args.work_dir, "a"), os.path.join(args.work_dir, "b"))


if __name__ == "__main__":
    sys.exit(main())
