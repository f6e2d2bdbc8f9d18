#!/usr/bin/env python3
"""Lab benchmarks on the twin with the release binary, each against a baseline measured in the
same run (`runbook --version`: process start and argument parsing, no engine, no twin):

- deploy: the lab from `empty` (runbooks/aws/deploy.rhai, about 13 virtual minutes),
  target under 1 s wall, median;
- drill: the whole of runbooks/gpu-lab.rhai from `empty` (more than 20 virtual minutes),
  target under 2 s wall, median, and peak memory (max RSS) under 100 MB;
- the journal: the same drill without one (RUNBOOK_JOURNAL=off), journaling to add < 5%;
- plan: `runbook plan` of the same drill (a rehearsal on the twin), within 3x its run; and
  the plan of the drill against `lab serve` reached as a real account is (kubeconfig and
  endpoint: it captures the lab with read-only calls, then rehearses on a twin of the
  capture), within 3x the drill's run on the embedded twin from the same (deployed) state;
- drill under faults: the same drill with 30% of AWS calls throttled and 20% failing with a
  server error, within 2x the fault-free drill's wall time (the SDK's backoffs are slept on the
  virtual clock); then both with AWS 1 ms away, where each retry costs a round trip (half the
  calls fail, so about twice the calls), compared with each other;
- the hybrid lab (`--scenario hybrid`): runbooks/hybrid/audit.rhai, link-loss.rhai and
  burst.rhai, each under 2 s wall and 100 MB, as the drill;
- nvml fan-out: benches/nvml-fanout.rhai, nvml::query over 64 GPU nodes within 3x the wall
  time of 2 nodes (it prints its own medians and ratio), with no added latency and with
  `--fault kube-latency=5ms`.

Usage: scripts/bench-lab.py [RUNS] (default 9).
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RELEASE = os.path.join(ROOT, "target", "release", "runbook")
# The journal-off baseline needs the `test-hooks` feature (a shipped binary always journals), so
# every case runs one binary built with it, copied aside; the plain release build is then put
# back. The feature adds nothing to the measured path but one environment lookup per run.
BINARY = None


def run_once(args, env):
    """Wall milliseconds and peak RSS (MB) of one run."""
    start = time.perf_counter()
    process = subprocess.Popen([BINARY, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, **env})
    _, status, usage = os.wait4(process.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"`runbook {' '.join(args)}` exited {code}: {process.stderr.read().decode()}")
    return wall, usage.ru_maxrss / 1024


def measure(args, runs, env):
    samples = [run_once(args, env) for _ in range(runs)]
    walls = sorted(w for w, _ in samples)
    return statistics.median(walls), walls[-1], max(m for _, m in samples)


def lab_serve(folder):
    """`lab serve` with its kubeconfig and env file in `folder`; returns the process and the env."""
    kubeconfig, env_file = os.path.join(folder, "kubeconfig"), os.path.join(folder, "lab.env")
    server = subprocess.Popen([BINARY, "lab", "serve", "--write-kubeconfig", kubeconfig, "--write-env", env_file],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    server.stdout.readline()  # the first line: it serves
    env = {}
    for line in open(env_file):
        key, _, value = line.strip().partition("=")
        if key and not key.startswith("#"):
            env[key] = value.strip("'\"")
    return server, kubeconfig, env


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    global BINARY
    folder = tempfile.mkdtemp(prefix="runbook-bench-")
    subprocess.run(["cargo", "build", "--release", "--quiet", "--features", "test-hooks"], cwd=ROOT, check=True)
    BINARY = os.path.join(folder, "runbook")
    shutil.copy2(RELEASE, BINARY)
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    server, kubeconfig, lab_env = lab_serve(folder)
    try:
        run_cases(runs, kubeconfig, lab_env)
    finally:
        server.terminate()
        server.wait()


def run_cases(runs, kubeconfig, lab_env):
    cases = [
        ("baseline: --version", ["--version"], None, None),
        ("deploy the lab from empty", ["run", "runbooks/aws/deploy.rhai", "--scenario", "empty", "--progress", "never"], 1000, None),
        ("gpu-lab.rhai from empty", ["run", "runbooks/gpu-lab.rhai", "--scenario", "empty", "--progress", "never"], 2000, 100),
        ("the same without a journal", ["run", "runbooks/gpu-lab.rhai", "--scenario", "empty", "--progress", "never"], None, None),
        ("plan of gpu-lab.rhai", ["plan", "runbooks/gpu-lab.rhai", "--scenario", "empty"], None, None),
        ("gpu-lab.rhai (deployed)", ["run", "runbooks/gpu-lab.rhai", "--progress", "never"], None, None),
        ("plan of it against lab serve", ["plan", "runbooks/gpu-lab.rhai", "--kubeconfig", kubeconfig,
                                          "--aws-endpoint", lab_env["AWS_ENDPOINT_URL"]], None, None),
        ("the same under AWS faults", ["run", "runbooks/gpu-lab.rhai", "--scenario", "empty", "--progress", "never",
                                       "--fault", "aws-throttle=0.3", "--fault", "aws-5xx=0.2"], 2000, 100),
        # 8 GPUs a node on NVLink and EFA: the target is within 2x the g5 drill.
        ("the drill on 2x p5.48xlarge", ["run", "runbooks/gpu-lab.rhai", "--scenario", "empty", "--progress", "never",
                                         "--set", "gpu_instance_type=p5.48xlarge"], 2000, 100),
        ("gpu-lab.rhai, AWS 1 ms away", ["run", "runbooks/gpu-lab.rhai", "--scenario", "empty", "--progress", "never",
                                         "--fault", "aws-latency=1ms"], None, None),
        ("... under AWS faults too", ["run", "runbooks/gpu-lab.rhai", "--scenario", "empty", "--progress", "never",
                                      "--fault", "aws-throttle=0.3", "--fault", "aws-5xx=0.2", "--fault", "aws-latency=1ms"], 2000, 100),
    ]
    drill = deployed = None
    base = None
    print(f"{'command':30} {'median ms':>10} {'max ms':>8} {'x baseline':>11} {'peak MB':>8}  target")
    for label, args, wall_target, memory_target in cases:
        env = {"RUNBOOK_JOURNAL": "off"} if "without a journal" in label else {}
        if "lab serve" in label:
            env = lab_env
        median, worst, peak = measure(args, runs, env)
        base = base or median
        target = []
        if wall_target:
            target.append(f"<{wall_target} ms: {'met' if median < wall_target else 'NOT met'}")
        if memory_target:
            target.append(f"<{memory_target} MB: {'met' if peak < memory_target else 'NOT met'}")
        if label.startswith("gpu-lab.rhai (deployed)"):
            deployed = median
        elif label.startswith("gpu-lab"):
            # The fault-free drill the next cases compare with (with the same latency, if any).
            drill = median
        elif "lab serve" in label:
            ratio = median / deployed
            target.append(f"{ratio:.2f}x the drill's run on the twin, <3x: {'met' if ratio < 3 else 'NOT met'}")
        elif label.startswith("plan"):
            ratio = median / drill
            target.append(f"{ratio:.2f}x the drill's run, <3x: {'met' if ratio < 3 else 'NOT met'}")
        elif "without a journal" in label:
            target.append(f"the journal adds {(drill / median - 1) * 100:.1f}%, <5%: {'met' if drill < median * 1.05 else 'NOT met'}")
        elif drill:
            ratio = median / drill
            target.append(f"{ratio:.2f}x the fault-free drill, <2x: {'met' if ratio < 2 else 'NOT met'}")
        print(f"{label:30} {median:10.1f} {worst:8.1f} {median / base:11.1f} {peak:8.1f}  {'; '.join(target)}")
    # The hybrid lab (seed 004): its audit and its two drills, each under the drill's targets.
    for label, runbook in [("hybrid audit", "runbooks/hybrid/audit.rhai"),
                           ("hybrid link-loss drill", "runbooks/hybrid/link-loss.rhai"),
                           ("hybrid burst drill", "runbooks/hybrid/burst.rhai")]:
        median, worst, peak = measure(["run", runbook, "--scenario", "hybrid", "--progress", "never"], runs, {})
        target = [f"<2000 ms: {'met' if median < 2000 else 'NOT met'}", f"<100 MB: {'met' if peak < 100 else 'NOT met'}"]
        print(f"{label:30} {median:10.1f} {worst:8.1f} {median / base:11.1f} {peak:8.1f}  {'; '.join(target)}")
    # The fan-out twice: on the twin as it is (answers in microseconds, so 64 nodes are bound by
    # the CPU the twin and the client share), and with the Kubernetes API 5 ms away, as a real
    # apiserver is, where the concurrency has latency to hide.
    for fault in [[], ["--fault", "kube-latency=5ms"]]:
        fanout = subprocess.run([BINARY, "run", "benches/nvml-fanout.rhai", "--progress", "never", *fault],
                                cwd=ROOT, capture_output=True, text=True)
        lines = [l for l in fanout.stdout.splitlines() if "nvml::query median" in l]
        where = " ".join(fault[1:]) or "no added latency"
        print(f"{where}: " + (lines[0].split("] ", 1)[-1] if lines else
                              f"nvml fan-out failed:\n{fanout.stdout}\n{fanout.stderr}"))


if __name__ == "__main__":
    main()
