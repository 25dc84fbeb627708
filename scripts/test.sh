#!/usr/bin/env bash
# Installs Tansuo with its test dependencies and runs the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh test
# Lint and type checks first: a minute, and they name the line a reviewer would.
.venv/bin/ruff check services bench tests
.venv/bin/mypy
# Two workers, each taking whole test files (module fixtures such as a crawled site are
# built once): the suite waits more than it computes (docs/testing.md).
exec .venv/bin/python -m pytest -p no:cacheprovider -q --durations=30 -n 2 --dist loadfile "$@"
