#!/usr/bin/env python3
"""Start-up benchmark for the runbook CLI (issue: `eval '1+1'` and `check runbooks/*.rhai`
under 30 ms median after build).

Runs each command N times against the release binary and prints the median, p90 and the
ratio to a baseline measured in the same run: `runbook --version`, which pays process start
and argument parsing but builds no engine. Usage: scripts/bench-cli.py [N] (default 50).
"""
import glob
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "runbook")


def measure(args, runs):
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        result = subprocess.run([BINARY, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        samples.append((time.perf_counter() - start) * 1000)
        if result.returncode != 0:
            sys.exit(f"`runbook {' '.join(args)}` exited {result.returncode}")
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9) - 1]


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 50
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    runbooks = sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "runbooks", "**", "*.rhai"), recursive=True))
    cases = [
        ("baseline: --version", ["--version"]),
        ("eval '1+1'", ["eval", "1+1"]),
        (f"check runbooks/ ({len(runbooks)} files)", ["check", *runbooks]),
    ]
    base = None
    print(f"{'command':40} {'median ms':>10} {'p90 ms':>8} {'x baseline':>11}")
    for label, args in cases:
        median, p90 = measure(args, runs)
        base = base or median
        print(f"{label:40} {median:10.2f} {p90:8.2f} {median / base:11.2f}")


if __name__ == "__main__":
    main()
