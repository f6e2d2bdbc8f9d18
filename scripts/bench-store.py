#!/usr/bin/env python3
"""What the shared store costs a drill, and whether it holds under a crowd. Against one `lab
serve` (speed 600) and one local PostgreSQL (Debian's, started here in a temporary folder as an
unprivileged user, fsync on as a real server has it):
1. runbooks/gpu-scale-up.rhai (GPU nodes up, checked, back to 0; journaled, kept in the
   history) with the default state folder (journal file, SQLite history) and with
   --state postgres://... (journal and history in the store), alternating, N runs each; medians.
2. 20 runbooks/verify.rhai --read-only runners and one drill at once against the store: no
   error (a verify may fail its cost guard, which sees the drill's GPUs up: that is its verdict,
   counted apart), nothing about the store on stderr, and the history rows the store gained (21
   expected).
Needs `cargo build --release`. Usage: scripts/bench-store.py [N]"""
import glob, os, shutil, statistics, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
B = os.path.join(ROOT, "target/release/runbook")
N = int(sys.argv[1]) if len(sys.argv) > 1 else 7
PASSWORD = "bench-store-secret"


def pg_bin():
    found = shutil.which("initdb")
    if found:
        return os.path.dirname(os.path.realpath(found))
    versions = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not versions:
        sys.exit("PostgreSQL not found (apt-get install postgresql)")
    return os.path.dirname(versions[-1])


def free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def as_server_user(argv):
    if os.geteuid() == 0:
        return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"] + argv
    return argv


def start_postgres(d):
    bin_dir = pg_bin()
    root = os.path.join(d, "pg")
    os.makedirs(root)
    with open(os.path.join(root, "pw"), "w") as f:
        f.write(PASSWORD)
    if os.geteuid() == 0:
        subprocess.run(["chown", "-R", "nobody:nogroup", root], check=True)
        os.chmod(d, 0o755)
    subprocess.run(as_server_user([f"{bin_dir}/initdb", "-D", f"{root}/data", "-U", "runbook",
                                   "-A", "scram-sha-256", f"--pwfile={root}/pw"]),
                   check=True, capture_output=True)
    port = free_port()
    options = f"-p {port} -k {root} -c listen_addresses=127.0.0.1"
    subprocess.run(as_server_user([f"{bin_dir}/pg_ctl", "-D", f"{root}/data", "-l", f"{root}/log",
                                   "-w", "-o", options, "start"]), check=True, capture_output=True)
    stop = lambda: subprocess.run(as_server_user([f"{bin_dir}/pg_ctl", "-D", f"{root}/data",
                                                  "-m", "fast", "stop"]), capture_output=True)
    psql = lambda sql: subprocess.run([f"{bin_dir}/psql", "-h", "127.0.0.1", "-p", str(port), "-U",
                                       "runbook", "-d", "postgres", "-Atc", sql],
                                      env={**os.environ, "PGPASSWORD": PASSWORD},
                                      capture_output=True, text=True, check=True).stdout.strip()
    return f"postgres://runbook:{PASSWORD}@127.0.0.1:{port}/postgres?sslmode=disable", stop, psql


def main():
    d = tempfile.mkdtemp()
    url, stop_pg, psql = start_postgres(d)
    kc, envf = f"{d}/kc", f"{d}/env"
    lab = subprocess.Popen([B, "lab", "serve", "--port", "0", "--speed", "600",
                            "--write-kubeconfig", kc, "--write-env", envf],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    lab.stdout.readline()
    env = dict(os.environ)
    for line in open(envf):
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            k, v = line.split("=", 1)
            env[k] = v
    env.update({"XDG_STATE_HOME": f"{d}/state", "NO_COLOR": "1"})
    env.pop("RUNBOOK_STATE", None)
    env.pop("RUNBOOK_HISTORY", None)
    target = ["--aws-endpoint", env["AWS_ENDPOINT_URL"], "--kubeconfig", kc, "--progress", "never"]
    drill = [B, "run", "runbooks/gpu-scale-up.rhai", "--yes"] + target
    verify = [B, "run", "runbooks/verify.rhai", "--read-only"] + target

    def once(argv, extra_env):
        t = time.perf_counter()
        r = subprocess.run(argv, env={**env, **extra_env}, cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 0, r.stdout[-800:] + r.stderr[-800:]
        return (time.perf_counter() - t) * 1000

    folder, store = [], []
    once(drill, {"RUNBOOK_STATE": url})  # makes the schema; not counted
    for _ in range(N):
        folder.append(once(drill, {}))
        store.append(once(drill, {"RUNBOOK_STATE": url}))
    f, s = statistics.median(folder), statistics.median(store)
    print(f"gpu-scale-up.rhai, state folder (journal file, SQLite history): median {f:.1f} ms ({min(folder):.1f}-{max(folder):.1f})")
    print(f"gpu-scale-up.rhai, --state postgres:// (journal and history in the store): median {s:.1f} ms ({min(store):.1f}-{max(store):.1f})")
    print(f"the store adds {s - f:+.1f} ms, {100 * (s - f) / f:+.1f}% of the drill's wall time")

    before = int(psql("SELECT count(*) FROM runbook.history_runs"))
    t = time.perf_counter()
    crowd = [subprocess.Popen(verify, env={**env, "RUNBOOK_STATE": url}, cwd=ROOT,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(20)]
    crowd.append(subprocess.Popen(drill, env={**env, "RUNBOOK_STATE": url}, cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    passed = guard = errors = 0
    for p in crowd:
        out, err = p.communicate()
        if p.returncode == 0:
            passed += 1
        elif p.returncode == 1 and "assertion failed: about $6/day" in err:
            guard += 1
        else:
            errors += 1
            print("error:", p.returncode, out[-500:], err[-500:])
        if "shared store" in err:
            errors += 1
            print("the store said:", err[-500:])
    wall = (time.perf_counter() - t) * 1000
    after = int(psql("SELECT count(*) FROM runbook.history_runs"))
    print(f"20 read-only verifies and one drill at once: {passed} passed, {guard} verify(s) failed "
          f"their cost guard (the drill's GPUs up), {errors} errors; history rows +{after - before} "
          f"(21 expected), {wall:.0f} ms in all")
    lab.terminate()
    stop_pg()
    shutil.rmtree(d, ignore_errors=True)


main()
