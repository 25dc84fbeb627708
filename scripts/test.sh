#!/usr/bin/env bash
# Installs Tansuo with its test dependencies and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh test
exec .venv/bin/python -m pytest -p no:cacheprovider -q --durations=30 "$@"
