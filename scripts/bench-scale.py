#!/usr/bin/env python3
"""Scale and latency benchmarks with the release binary, against baselines measured in the
same run:

- the drill (runbooks/gpu-lab.rhai from `empty`) with `gpu_nodes` = 2, 8, 32, 64, 256: wall
  time per GPU node should stay about constant (at 256 within 1.5x of that at 64); targets:
  64 nodes < 2 s and peak RSS < 150 MB, 256 nodes < 8 s and < 400 MB;
- runbooks/verify.rhai against `lab serve` with the Kubernetes API 20 ms and AWS 50 ms away
  (`--fault kube-latency=20ms --fault aws-latency=50ms`): target < 400 ms wall (median), and
  the requests it makes, counted by the twin (`GET /twin/requests`). The baseline is the same
  verify with no added latency.

Usage: scripts/bench-scale.py [RUNS] (default 3; the 256-node drill runs once less, at least 1).
"""
import base64
import json
import os
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "runbook")


def run_once(args, env=None):
    """Wall milliseconds and peak RSS (MB) of one run."""
    start = time.perf_counter()
    process = subprocess.Popen([BINARY, *args], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env={**os.environ, **(env or {})})
    _, status, usage = os.wait4(process.pid, 0)
    wall = (time.perf_counter() - start) * 1000
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"`runbook {' '.join(args)}` exited {code}: {process.stderr.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024


def drill(runs):
    print(f"{'gpu_nodes':>9} {'median ms':>10} {'ms/node':>8} {'peak MB':>8}  target")
    per_node = {}
    for nodes in [2, 8, 32, 64, 256]:
        count = max(1, runs - 1) if nodes == 256 else runs
        samples = [run_once(["run", "runbooks/gpu-lab.rhai", "--scenario", "empty", "--progress", "never",
                             "--set", f"gpu_nodes={nodes}"]) for _ in range(count)]
        median = statistics.median(w for w, _ in samples)
        peak = max(m for _, m in samples)
        per_node[nodes] = median / nodes
        target = ""
        if nodes == 64:
            target = (f"<2000 ms: {'met' if median < 2000 else 'NOT met'}; "
                      f"<150 MB: {'met' if peak < 150 else 'NOT met'}")
        if nodes == 256:
            ratio = per_node[256] / per_node[64]
            target = (f"<8000 ms: {'met' if median < 8000 else 'NOT met'}; "
                      f"<400 MB: {'met' if peak < 400 else 'NOT met'}; "
                      f"per node {ratio:.2f}x that at 64, <1.5x: {'met' if ratio < 1.5 else 'NOT met'}")
        print(f"{nodes:9} {median:10.1f} {per_node[nodes]:8.1f} {peak:8.1f}  {target}")


class Lab:
    """`runbook lab serve` on free ports, with its kubeconfig and env file in a temp dir."""

    def __init__(self, faults):
        self.dir = tempfile.TemporaryDirectory()
        kubeconfig = os.path.join(self.dir.name, "kubeconfig")
        env_file = os.path.join(self.dir.name, "aws.env")
        args = ["lab", "serve", "--port", "0", "--write-kubeconfig", kubeconfig, "--write-env", env_file]
        for fault in faults:
            args += ["--fault", fault]
        self.process = subprocess.Popen([BINARY, *args], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                        text=True)
        first = self.process.stdout.readline()
        self.url = next(w for w in first.split() if w.startswith("https://"))
        # The lab's keys and admin token, as a user who sources the env file has them.
        self.env = dict(line.strip().split("=", 1) for line in open(env_file) if "=" in line and not line.startswith("#"))
        self.target = ["--aws-endpoint", self.env["AWS_ENDPOINT_URL"], "--kubeconfig", kubeconfig]
        ca = next(line.split(":", 1)[1].strip() for line in open(kubeconfig) if "certificate-authority-data" in line)
        if ca in (">-", "|-", ""):
            lines = open(kubeconfig).read().split("certificate-authority-data:", 1)[1].splitlines()[1:]
            ca = next(line.strip() for line in lines if line.strip())
        self.tls = ssl.create_default_context(cadata=base64.b64decode(ca).decode())

    def requests(self):
        request = urllib.request.Request(f"{self.url}/twin/requests",
                                         headers={"Authorization": f"Bearer {self.env['RUNBOOK_LAB_TOKEN']}"})
        with urllib.request.urlopen(request, context=self.tls) as answer:
            counts = json.load(answer)
        # This request is counted too.
        return counts["kubernetes"] - 1, counts["aws"]

    def close(self):
        self.process.terminate()
        self.process.wait()
        self.dir.cleanup()


def verify(runs):
    print(f"{'verify.rhai':34} {'median ms':>10} {'k8s req':>8} {'aws req':>8}  target")
    baseline = None
    for label, faults in [("no added latency", []),
                          ("kube 20 ms, aws 50 ms away", ["kube-latency=20ms", "aws-latency=50ms"])]:
        lab = Lab(faults)
        try:
            walls = []
            for _ in range(runs):
                before = lab.requests()
                wall, _ = run_once(["run", "runbooks/verify.rhai", "--progress", "never", "--read-only", *lab.target], lab.env)
                after = lab.requests()
                walls.append(wall)
            kube, aws = after[0] - before[0], after[1] - before[1]
        finally:
            lab.close()
        median = statistics.median(walls)
        baseline = baseline or median
        target = "" if not faults else (f"<400 ms: {'met' if median < 400 else 'NOT met'}; "
                                        f"{median / baseline:.1f}x the run without latency")
        print(f"{label:34} {median:10.1f} {kube:8} {aws:8}  {target}")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    drill(runs)
    verify(max(runs, 5))


if __name__ == "__main__":
    main()
