"""tools/gpu_check.sh's queue, which carries a device session's steps across calls (docs/LIBRARIES.md,
"Still to run on a device"), run here: every step runs, whatever a step reads from its standard
input (on the ninth device run mpirun read the queue's own steps file and the queue ended after its
second step), and `watch` reports the end and packs what the steps wrote."""
import os
import subprocess

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
GPU_CHECK = os.path.join(ROOT, "tools", "gpu_check.sh")


def test_a_step_that_reads_its_stdin_leaves_the_queue_its_other_steps(tmp_path):
    env = dict(os.environ, QUEUE=str(tmp_path / "queue"), OUT=str(tmp_path / "out"), RUNS=str(tmp_path / "runs"))
    subprocess.run([GPU_CHECK, "queue", "reads: cat > /dev/null; echo read > $OUT/read.txt",
                    "after: echo after > $OUT/after.txt"], env=env, check=True, timeout=300,
                   capture_output=True)
    watched = subprocess.run([GPU_CHECK, "watch", "120"], env=env, capture_output=True, text=True, timeout=300)
    assert "queue done" in watched.stdout, watched.stdout + watched.stderr
    log = (tmp_path / "queue" / "queue.log").read_text()
    assert "end reads rc=0" in log and "end after rc=0" in log, log
    assert (tmp_path / "queue" / "02-after" / "after.txt").read_text() == "after\n"
    listed = subprocess.run(["tar", "tzf", str(tmp_path / "out" / "queue.tgz")], capture_output=True, text=True,
                            check=True).stdout
    assert "./01-reads/read.txt" in listed and "./02-after/after.txt" in listed and "./tree/" not in listed
