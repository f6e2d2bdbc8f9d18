#!/usr/bin/env python3
"""How close `runbooks/verify.rhai --read-only` against `lab serve` comes to the wire, with the
release binary:

- the floor: the very requests verify made (recorded by the twin, `/twin/record`), replayed by
  one curl process: the same TLS and CA, the same bearer token, real SigV4 signatures
  (`--aws-sigv4`), connections reused. verify and the floor alternate, RUNS times each; the
  ratio of the medians is the figure (issue #39: at most 2x);
- the connections one verify run opens to each endpoint (the twin counts what it accepts;
  the run's JSON report counts what runbook opened);
- lab serve's first response on a fresh TLS connection, to each API: 50 connections, each a handshake and
  then one request, the time from sending it to the first byte back (target < 5 ms at p99:
  what a server that waits for the client's delayed ACK fails by 40 ms).

Usage: scripts/bench-wire.py [RUNS] (default 11).
"""
import json
import os
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BINARY = os.path.join(ROOT, "target", "release", "runbook")
VERIFY = [BINARY, "run", "runbooks/verify.rhai", "--cluster", "myeks5w", "--read-only", "--progress", "never"]


class Lab:
    """`lab serve` with its env file and kubeconfig in a scratch folder."""

    def __init__(self, folder):
        kubeconfig, env_file = os.path.join(folder, "kubeconfig"), os.path.join(folder, "lab.env")
        self.server = subprocess.Popen([BINARY, "lab", "serve", "--write-kubeconfig", kubeconfig,
                                        "--write-env", env_file],
                                       cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.server.stdout.readline()  # the first line: it serves
        self.env = {}
        for line in open(env_file):
            key, _, value = line.strip().partition("=")
            if key and not key.startswith("#"):
                self.env[key] = value.strip("'\"")
        self.kube = self.env["RUNBOOK_KUBE_SERVER"]
        self.token = self.env["RUNBOOK_LAB_TOKEN"]
        self.aws = self.env["AWS_ENDPOINT_URL"]
        # One CA for both APIs, written beside the env file (AWS_CA_BUNDLE).
        self.ca = self.env["AWS_CA_BUNDLE"]
        self.tls = ssl.create_default_context(cafile=self.ca)

    def admin(self, method, path):
        request = urllib.request.Request(f"{self.kube}/twin/{path}", method=method,
                                         headers={"Authorization": f"Bearer {self.token}"})
        with urllib.request.urlopen(request, context=self.tls) as answer:
            return json.load(answer)

    def stop(self):
        self.server.terminate()
        self.server.wait()


def wall_ms(args, env, **kwargs):
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env={**os.environ, **env}, capture_output=True, text=True, **kwargs)
    wall = (time.perf_counter() - start) * 1000
    if done.returncode != 0:
        sys.exit(f"`{' '.join(args)}` exited {done.returncode}: {done.stderr[-2000:]}")
    return wall, done.stdout


def curl_config(lab, recorded, folder):
    """One curl config that makes every recorded request in turn, with `next` between them."""
    region = lab.env.get("AWS_REGION", "ap-northeast-2")
    keys = f"{lab.env['AWS_ACCESS_KEY_ID']}:{lab.env['AWS_SECRET_ACCESS_KEY']}"
    quote = lambda text: '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
    lines = []
    for n, r in enumerate(recorded):
        if lines:
            lines.append("next")
        lines += ["silent", "output = /dev/null", 'write-out = "%{http_code}\\n"', f"request = {r['method']}"]
        if r["content_type"]:
            lines.append(f"header = {quote('Content-Type: ' + r['content_type'])}")
        if r["service"] == "kubernetes":
            lines += [f"url = {quote(lab.kube + r['path'])}", f"cacert = {quote(lab.ca)}",
                      f"header = {quote('Authorization: Bearer ' + lab.token)}"]
            continue
        lines += [f"url = {quote(lab.aws + r['path'])}", f"cacert = {quote(lab.ca)}", f"user = {quote(keys)}",
                  f"aws-sigv4 = {quote('aws:amz:' + region + ':' + r['service'])}"]
        if r["target"]:
            lines.append(f"header = {quote('X-Amz-Target: ' + r['target'])}")
        if r["body"] or r["method"] == "POST":
            body = os.path.join(folder, f"body-{n}")
            with open(body, "w") as f:
                f.write(r["body"])
            lines.append(f"data-binary = {quote('@' + body)}")
    path = os.path.join(folder, "floor.curl")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def first_responses(lab, url, path, count=50):
    """ms from sending one request on a fresh TLS connection to its first byte back."""
    host, port = url.removeprefix("https://").rsplit(":", 1)
    request = (f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAuthorization: Bearer {lab.token}\r\n"
               "Connection: close\r\n\r\n").encode()
    samples = []
    for _ in range(count):
        with socket.create_connection((host, int(port))) as raw:
            raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with lab.tls.wrap_socket(raw, server_hostname=host) as tls:
                start = time.perf_counter()
                tls.sendall(request)
                if not tls.recv(1):
                    sys.exit("lab serve closed a connection without answering")
                samples.append((time.perf_counter() - start) * 1000)
    return sorted(samples)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    folder = tempfile.mkdtemp(prefix="runbook-wire-")
    lab = Lab(folder)
    try:
        env = lab.env
        wall_ms(VERIFY, env)  # warm: the first run of a fresh lab seeds its history
        before = lab.admin("GET", "requests")
        lab.admin("POST", "record?on")
        report = os.path.join(folder, "verify.json")
        wall_ms(VERIFY + ["--report", report], env)
        counted = json.load(open(report)).get("connections", {})
        recorded = lab.admin("POST", "record?off")
        after = lab.admin("GET", "requests")
        opened = {api: after["connections"][api] - before["connections"][api] for api in ("kubernetes", "aws")}
        # The admin calls after `before` (record on, record off, and `after` itself, which counts
        # its own connection) are on connections of their own.
        opened["kubernetes"] -= 3
        config = curl_config(lab, recorded, folder)
        floor_args = ["curl", "--config", config]
        _, codes = wall_ms(floor_args, {})
        refused = [c for c in codes.split() if c in ("401", "403")]
        if refused:
            sys.exit(f"the floor's requests were refused ({len(refused)} of {len(recorded)}): {config}")
        verify, floor = [], []
        for _ in range(runs):
            verify.append(wall_ms(VERIFY, env)[0])
            floor.append(wall_ms(floor_args, {})[0])
        kube = sum(1 for r in recorded if r["service"] == "kubernetes")
        v, f = statistics.median(verify), statistics.median(floor)
        ratio = v / f
        print(f"{len(recorded)} requests ({kube} Kubernetes, {len(recorded) - kube} AWS), {runs} runs each, alternating")
        print(f"verify.rhai --read-only  {v:7.1f} ms median ({min(verify):.1f}-{max(verify):.1f})")
        print(f"curl floor, one process  {f:7.1f} ms median ({min(floor):.1f}-{max(floor):.1f})")
        print(f"ratio {ratio:.2f}x, target <= 2x: {'met' if ratio <= 2 else 'NOT met'}")
        print(f"connections one verify run opened: Kubernetes {opened['kubernetes']}, AWS {opened['aws']} "
              f"(target <= 2 each: {'met' if max(opened.values()) <= 2 else 'NOT met'}); "
              f"its JSON report: {counted}")
        for api, url, path in (("Kubernetes", lab.kube, "/readyz"), ("AWS", lab.aws, "/twin/audit")):
            first = first_responses(lab, url, path)
            p99 = first[min(len(first) - 1, int(len(first) * 0.99))]
            print(f"first response on 50 fresh TLS connections to {api}: median {statistics.median(first):.2f} ms, "
                  f"p99 {p99:.2f} ms, max {first[-1]:.2f} ms (target p99 < 5 ms: {'met' if p99 < 5 else 'NOT met'})")
    finally:
        lab.stop()


if __name__ == "__main__":
    main()
