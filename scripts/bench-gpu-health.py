#!/usr/bin/env python3
"""GPU health benchmarks on the twin with the release binary: runbooks/gpu-health.rhai with
`gpu_nodes` = 2 (the baseline, measured in the same run), 16 and 64, reading the wall time of
its `health` step (nvml::collect + nvml::judge: a DCGM probe pod per node, nvidia-smi, dmesg
and `dcgmi diag -r 1` in each) and its `NCCL pair sweep` step (a ring of node pairs, each an
all-reduce with its pods made and removed) from the run's JSON report.

Targets (issue #16): the pair sweep over 16 GPU nodes under 2 s wall, the health of 64 nodes
under 1 s wall; the per-node cost should stay about that of 2 nodes.

Then benches/p5-health.rhai: gpu::health over 64 p5.48xlarge nodes (512 H100s) against 2 in the
same run (issue #36: under 2 s wall), and the peak memory of that whole run (under 300 MB).

Then the health of 64 nodes with a 90-day GPU record (issue #38: under 1 s wall): one real run
of the drill gives each machine's verdict, which is kept again for every hour of the 90 days
before it (2,160 runs, 138,240 verdicts; the record a fleet checked hourly would have), and the
drill's `health` step (which reads each machine's record to escalate) is timed against the same
drill with an empty record. benches/policy-eval.rhai then times nvml::judge per node (under 1 ms)
with no record and with that 90-day one.

Usage: scripts/bench-gpu-health.py [RUNS] (default 3; median of RUNS runs per size).
"""
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "runbook")
STEPS = ["health", "NCCL pair sweep"]
TARGETS = {("NCCL pair sweep", 16): 2000, ("health", 64): 1000}


def run_once(nodes, history=None):
    """Wall ms of the whole run and of each step in STEPS, read from the JSON report."""
    with tempfile.TemporaryDirectory() as scratch:
        report = os.path.join(scratch, "report.json")
        args = [BINARY, "run", "runbooks/gpu-health.rhai", "--progress", "never", "--report", report,
                "--set", f"gpu_nodes={nodes}", "--set", f"gpu_max={max(nodes, 2)}"]
        if history:
            args += ["--history", history]
        start = time.perf_counter()
        done = subprocess.run(args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        wall = (time.perf_counter() - start) * 1000
        if done.returncode != 0:
            sys.exit(f"`{' '.join(args[1:])}` exited {done.returncode}: {done.stderr.decode()[-2000:]}")
        with open(report) as f:
            steps = {s["name"]: s["wall_ms"] for s in json.load(f)["steps"]}
    missing = [s for s in STEPS if s not in steps]
    if missing:
        sys.exit(f"the report of gpu_nodes={nodes} has no step {missing}: {sorted(steps)}")
    return wall, {s: steps[s] for s in STEPS}


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    print(f"{'gpu_nodes':>9} {'run ms':>8} {'health ms':>10} {'/node':>6} {'sweep ms':>9} {'/pair':>6}  target")
    base = None
    for nodes in [2, 16, 64]:
        samples = [run_once(nodes) for _ in range(runs)]
        wall = statistics.median(w for w, _ in samples)
        medians = {s: statistics.median(steps[s] for _, steps in samples) for s in STEPS}
        # A ring over N nodes is N pairs (one for N = 2).
        pairs = 1 if nodes == 2 else nodes
        per = (medians["health"] / nodes, medians["NCCL pair sweep"] / pairs)
        base = base or per
        notes = []
        for step, limit in [(s, TARGETS.get((s, nodes))) for s in STEPS]:
            if limit:
                notes.append(f"{step} <{limit} ms: {'met' if medians[step] < limit else 'NOT met'}")
        if nodes != 2:
            notes.append(f"per node {per[0] / base[0]:.2f}x, per pair {per[1] / base[1]:.2f}x those at 2")
        print(f"{nodes:9} {wall:8.0f} {medians['health']:10.0f} {per[0]:6.1f} "
              f"{medians['NCCL pair sweep']:9.0f} {per[1]:6.1f}  {'; '.join(notes)}")
    p5_health()
    long_record(runs)


HISTORY_FILE = "history.sqlite3"


def keep_hourly_back(history, days):
    """Keeps every machine's verdict of the one run in `history` again for each hour of the
    `days` before it: a run row per hour (the record's rows belong to runs) and a verdict per
    machine per run, as the drill's own write does."""
    db = sqlite3.connect(os.path.join(history, HISTORY_FILE))
    run = db.execute("SELECT * FROM runs ORDER BY number DESC LIMIT 1").fetchone()
    columns = [c[1] for c in db.execute("PRAGMA table_info(runs)")]
    verdicts = db.execute("SELECT node, machine, verdict, health FROM gpu_verdicts WHERE run = ?",
                          (run[0],)).fetchall()
    finished = run[columns.index("finished")]
    with db:
        for hour in range(1, days * 24 + 1):
            at = finished - hour * 3600
            row = dict(zip(columns, run))
            row.update(number=None, started=at - 1, finished=at, run_id=f"{row['run_id']}-h{hour}")
            number = db.execute(f"INSERT INTO runs ({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))})",
                                [row[c] for c in columns]).lastrowid
            db.executemany("INSERT INTO gpu_verdicts (run, finished, node, machine, verdict, health) "
                           "VALUES (?, ?, ?, ?, ?, ?)", [(number, at, *v) for v in verdicts])
    count = db.execute("SELECT count(*) FROM gpu_verdicts").fetchone()[0]
    db.close()
    return count


def judge_per_node(history):
    """benches/policy-eval.rhai's line: nvml::judge's median per node over 64 nodes."""
    args = [BINARY, "run", "benches/policy-eval.rhai", "--progress", "never", "--history", history]
    done = subprocess.run(args, cwd=ROOT, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"benches/policy-eval.rhai failed: {(done.stdout + done.stderr)[-2000:]}")
    return next((l.split("] ", 1)[-1] for l in done.stdout.splitlines() if "nvml::judge median" in l), done.stdout)


def long_record(runs, nodes=64, days=90):
    """The drill's health step over `nodes` with a `days` record against an empty one."""
    with tempfile.TemporaryDirectory() as scratch:
        empty = []
        for i in range(runs):
            fresh = os.path.join(scratch, f"empty{i}")
            empty.append(run_once(nodes, fresh)[1]["health"])
        history = os.path.join(scratch, "long")
        run_once(nodes, history)
        kept = keep_hourly_back(history, days)
        size = os.path.getsize(os.path.join(history, HISTORY_FILE)) / 1e6
        long = [run_once(nodes, history)[1]["health"] for _ in range(runs)]
        base, with_record = statistics.median(empty), statistics.median(long)
        print(f"health of {nodes} nodes with a {days}-day record ({kept} verdicts, {size:.0f} MB): "
              f"{with_record:.0f} ms against {base:.0f} ms with none, {with_record / base:.2f}x; "
              f"target < 1000 ms: {'met' if with_record < 1000 else 'NOT met'}")
        copy = os.path.join(scratch, "copy")
        shutil.copytree(history, copy)
        print(f"no record: {judge_per_node(os.path.join(scratch, 'none'))}")
        print(f"{days}-day record: {judge_per_node(copy)}")


def p5_health():
    """benches/p5-health.rhai: its own medians (2 and 64 p5 nodes), and the run's peak RSS."""
    args = [BINARY, "run", "benches/p5-health.rhai", "--progress", "never"]
    process = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"benches/p5-health.rhai failed: {out[-2000:]}")
    line = next((l.split("] ", 1)[-1] for l in out.splitlines() if "gpu::health median" in l), out)
    peak = usage.ru_maxrss / 1024
    print(f"{line}; peak {peak:.0f} MB, <300 MB: {'met' if peak < 300 else 'NOT met'}")


if __name__ == "__main__":
    main()
