#!/usr/bin/env bash
# Builds runbook as deploy/container/Dockerfile does (release, x86_64-unknown-linux-musl) and
# proves the binary is what the image needs: without the tests' hooks, statically linked (no program interpreter, no
# shared libraries) and able to run the whole lab drill as an unprivileged user in an empty
# environment. Needs the musl target (rustup target add x86_64-unknown-linux-musl) and
# musl-tools; CARGO_TARGET_DIR as usual.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGET=x86_64-unknown-linux-musl
cargo build --release --locked --target "$TARGET"
scripts/install-tools.sh >/dev/null
binary="${CARGO_TARGET_DIR:-target}/$TARGET/release/runbook"
if readelf -l "$binary" | grep -q "Requesting program interpreter"; then
    echo "FAIL: $binary asks for a program interpreter (dynamically linked)" >&2
    exit 1
fi
if readelf -d "$binary" 2>/dev/null | grep -q NEEDED; then
    echo "FAIL: $binary needs shared libraries:" >&2
    readelf -d "$binary" | grep NEEDED >&2
    exit 1
fi
# The test hooks (a crash or panic on purpose, a run without a journal) are for test builds
# only: a shipped binary must not even hold their names.
for hook in RUNBOOK_CRASH_AFTER_MUTATION RUNBOOK_PANIC_AFTER_MUTATION RUNBOOK_JOURNAL test_stall; do
    if grep -qa "$hook" "$binary"; then
        echo "FAIL: $binary holds the test hook $hook (built with --features test-hooks?)" >&2
        exit 1
    fi
done
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$binary" "$work/runbook"
cp -r runbooks charts snapshots "$work/"
chmod -R a+rX "$work"
mkdir "$work/state" && chown 65532:65532 "$work/state"
# As the image runs it: user 65532, no environment but HOME, the drill on the lab twin.
(cd "$work" && setpriv --reuid=65532 --regid=65532 --clear-groups \
    env -i HOME=/tmp ./runbook run runbooks/gpu-lab.rhai --scenario empty --progress never \
    --state-dir "$work/state" --helm "$repo/.tools/bin/helm" >"$work/out.txt") || {
    cat "$work/out.txt" >&2
    echo "FAIL: the static binary did not pass the drill" >&2
    exit 1
}
tail -1 "$work/out.txt"
echo "ok: $binary is static ($(du -h "$binary" | cut -f1)) and passed the drill as user 65532"
