#!/usr/bin/env bash
# Installs Tansuo, builds Debian's Chinese manuals as a local site, crawls it and serves
# the search UI on http://127.0.0.1:8080/ (Ctrl-C stops; run again to reuse the crawl).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh
exec .venv/bin/tansuo demo --data tansuo-demo "$@"
