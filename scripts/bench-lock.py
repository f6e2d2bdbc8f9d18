#!/usr/bin/env python3
"""What the lock on a target costs a run that may change it: runbooks/verify.rhai against
`lab serve` with --read-only (no lock) and with --yes (the target's identity read, the local
lock, the Lease taken and given back), alternating, 11 runs each; medians. Needs
`cargo build --release`. Usage: scripts/bench-lock.py"""
import os, statistics, subprocess, tempfile, time
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.path.join(ROOT, "target/release/runbook")
d=tempfile.mkdtemp()
kc=f"{d}/kc"; envf=f"{d}/env"
lab=subprocess.Popen([B,"lab","serve","--port","0","--speed","600","--write-kubeconfig",kc,"--write-env",envf],stdout=subprocess.PIPE,stderr=subprocess.DEVNULL,text=True)
lab.stdout.readline()
env=dict(os.environ)
for line in open(envf):
    line=line.strip()
    if line and not line.startswith("#") and "=" in line:
        k,v=line.split("=",1); env[k]=v
env["XDG_STATE_HOME"]=f"{d}/state"; env["RUNBOOK_HISTORY"]="off"; env["NO_COLOR"]="1"
base=[B,"run","runbooks/verify.rhai","--progress","never","--history","off","--aws-endpoint",env["AWS_ENDPOINT_URL"],"--kubeconfig",kc]
def once(extra):
    t=time.perf_counter(); r=subprocess.run(base+extra,env=env,cwd=ROOT,capture_output=True,text=True); w=(time.perf_counter()-t)*1000
    assert r.returncode==0,(r.stderr[-500:])
    return w
ro=[];mu=[]
for i in range(11):
    ro.append(once(["--read-only"])); mu.append(once(["--yes"]))
print(f"verify --read-only (no lock) median {statistics.median(ro):.1f} ms ({min(ro):.1f}-{max(ro):.1f})")
print(f"verify --yes (identity, flock, Lease taken and given back) median {statistics.median(mu):.1f} ms ({min(mu):.1f}-{max(mu):.1f})")
print(f"difference {statistics.median(mu)-statistics.median(ro):.1f} ms")
lab.terminate()
