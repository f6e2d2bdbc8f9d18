#!/usr/bin/env python3
"""What the twin's validation costs (issue "The twin refuses what EKS refuses": at most 10% on
the drill's wall time and on 1,000 sequential creates), measured against the same binary
without it, built from BASELINE (default: the commit before field validation landed) in a
worktree, both release, runs alternated so load hits both alike:

- the drill: runbooks/gpu-lab.rhai from `empty`, wall time, median of RUNS;
- creates: benches/creates.rhai, 1,000 Deployments one by one through k8s::apply (the time it
  prints), median of RUNS.

Usage: scripts/bench-validation.py [RUNS] [BASELINE]   (default 7, 5c528c9: the tree before validation)
"""
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 7
BASELINE = sys.argv[2] if len(sys.argv) > 2 else "5c528c9"
WORKTREE = "/tmp/runbook-bench-baseline"


def build_baseline():
    """The baseline's release binary, built in a worktree into this checkout's target folder
    (its dependencies are shared) and copied out before this build replaces it."""
    if not os.path.isdir(WORKTREE):
        subprocess.run(["git", "worktree", "add", "--detach", WORKTREE, BASELINE], cwd=ROOT, check=True)
    target = os.path.join(ROOT, "target")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--offline"], cwd=WORKTREE, check=True,
                   env={**os.environ, "CARGO_TARGET_DIR": target})
    copy = "/tmp/runbook-bench-baseline-bin"
    shutil.copy(os.path.join(target, "release", "runbook"), copy)
    return copy


def drill(binary):
    start = time.perf_counter()
    subprocess.run([binary, "run", "runbooks/gpu-lab.rhai", "--scenario", "empty", "--progress", "never"],
                   cwd=ROOT, check=True, stdout=subprocess.DEVNULL)
    return (time.perf_counter() - start) * 1000


def creates(binary):
    out = subprocess.run([binary, "run", "benches/creates.rhai", "--scenario", "empty", "--progress", "never"],
                         cwd=ROOT, check=True, capture_output=True, text=True).stdout
    return float(next(l.split()[-1] for l in out.splitlines() if "creates_ms" in l))


def main():
    baseline = build_baseline()
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    current = os.path.join(ROOT, "target", "release", "runbook")
    for name, measure in [("drill", drill), ("1,000 creates", creates)]:
        with_validation, without = [], []
        for _ in range(RUNS):
            without.append(measure(baseline))
            with_validation.append(measure(current))
        a, b = statistics.median(with_validation), statistics.median(without)
        print(f"{name}: {a:.1f} ms with validation, {b:.1f} ms without ({BASELINE}): "
              f"{(a / b - 1) * 100:+.1f}% (target at most +10%)")


if __name__ == "__main__":
    main()
