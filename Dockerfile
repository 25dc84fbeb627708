# syntax=docker/dockerfile:1
# One image for every Tansuo process. The entrypoint is the `tansuo` CLI:
#   docker run IMAGE scheduler | crawler | indexer | ranker | api | seed URL...
# and Celery runs from the same image with another entrypoint:
#   docker run --entrypoint celery IMAGE -A services.tasks.celery_app worker
# Build: docker build -t tansuo:0.1.0 .   (docs/deploy.md)

# Both stages must use the same Python: the virtualenv copied from the builder points
# at this base image's python3.11. The default is the official image; on a machine
# without a registry, deploy/no-registry/base-image.sh makes one from Debian's packages
# (Python 3.11 too) and docker-compose.no-registry.yml passes it here.
ARG PYTHON_IMAGE=python:3.11-slim

# --- builder: resolve and install every wheel into a virtualenv ---------------------
FROM ${PYTHON_IMAGE} AS builder
# PIP_CONSTRAINT: every package, setuptools for the build step included, at the version
# of constraints.txt, the versions the tests ran with (scripts/refresh-constraints.sh).
ENV PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    PIP_CONSTRAINT=/src/constraints.txt
WORKDIR /src
RUN python -m venv /opt/tansuo
# A C compiler for Tansuo's own C module (services/common/_native.c, built by setup.py):
# the final stage gets the built module inside the virtualenv, and no compiler. The
# official image has Python's headers; Debian's Python needs python3-dev for them.
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && { python -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
      || apt-get install -y --no-install-recommends python3-dev; } \
 && rm -rf /var/lib/apt/lists/*
# Dependencies before the source, so that editing a .py file reuses this layer. Every
# dependency ships manylinux wheels for CPython 3.11. Then trim what a running service
# never imports: libraries' own test suites (scipy's and numpy's are tens of MB).
# The .pth file puts /opt/tansuo-app, where Tansuo itself goes below, on the path.
COPY constraints.txt pyproject.toml README.md ./
RUN python -c 'import tomllib; print("\n".join(tomllib.load(open("pyproject.toml", "rb"))["project"]["dependencies"]))' \
        > /tmp/requirements.txt \
 && /opt/tansuo/bin/pip install --no-cache-dir --requirement /tmp/requirements.txt \
 && find /opt/tansuo/lib -depth -type d -name tests -path '*/site-packages/*' -exec rm -rf {} + \
 && /opt/tansuo/bin/python -c 'import pathlib, sysconfig; pathlib.Path(sysconfig.get_paths()["purelib"], "tansuo-app.pth").write_text("/opt/tansuo-app\n")'
COPY setup.py ./
COPY services ./services
# Tansuo itself (templates, static files and the compiled module included) goes to
# /opt/tansuo-app, apart from the dependencies: a change to the code then makes a new
# layer of a few MB in the image, not a new copy of the whole virtualenv. The check
# imports it with -I (no current directory on sys.path): from /src, the source tree,
# which has no compiled module, would shadow the installed package.
# pip and setuptools leave last: only installing needs them.
RUN /opt/tansuo/bin/pip install --no-cache-dir --no-deps --target /opt/tansuo-app . \
 && /opt/tansuo/bin/python -I -c "import services.common._native" \
 && /opt/tansuo/bin/python -m pip uninstall --yes --quiet pip setuptools

# --- final: the virtualenv on a clean slim image, run as an unprivileged user ---------
FROM ${PYTHON_IMAGE}
LABEL org.opencontainers.image.title="tansuo" \
      org.opencontainers.image.description="Tansuo (探索): distributed search engine for Chinese-language sites" \
      org.opencontainers.image.licenses="Apache-2.0" \
      org.opencontainers.image.source="https://github.com/tansuo-search/tansuo"

# A numeric UID: Kubernetes can only enforce runAsNonRoot when the image's USER is a
# number. 10001 stays clear of the distribution's system users.
RUN groupadd --system --gid 10001 tansuo \
 && useradd --system --uid 10001 --gid 10001 --home-dir /var/lib/tansuo --no-create-home \
        --shell /usr/sbin/nologin tansuo \
 && install -d -o 10001 -g 10001 -m 0750 /var/lib/tansuo

# Two layers: the dependencies (the same from build to build while constraints.txt and
# the dependency list stay the same), then Tansuo.
COPY --from=builder /opt/tansuo /opt/tansuo
COPY --from=builder /opt/tansuo-app /opt/tansuo-app

# PYTHONDONTWRITEBYTECODE: the root filesystem is read-only in Kubernetes, and pip
# already compiled every module at install time.
# TANSUO_DATA_DIR is where embedded backends would write; cluster mode keeps its state
# in Kafka, Redis, S3 and Elasticsearch, so a volume there is optional.
# TANSUO_API_HOST: inside a container the API must listen beyond loopback.
ENV PATH=/opt/tansuo-app/bin:/opt/tansuo/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    PYTHONDONTWRITEBYTECODE=1 \
    HOME=/var/lib/tansuo \
    TANSUO_LOG_FORMAT=json \
    TANSUO_DATA_DIR=/var/lib/tansuo \
    TANSUO_API_HOST=0.0.0.0 \
    TANSUO_API_PORT=8080 \
    TANSUO_HEALTH_PORT=9102

# Warm the segmenter now so that the first page a pod sees does not pay for it, and
# fail the build if the package does not import. Tansuo segments with rjieba (jieba in
# Rust); jieba itself is only a test dependency, warmed here if a derived image adds it.
RUN python -c "from services.common.analysis import initialise; initialise()" \
 && python -c "import importlib.util, logging; spec = importlib.util.find_spec('jieba'); jieba = spec and __import__('jieba'); jieba and jieba.setLogLevel(logging.WARNING); jieba and jieba.initialize()" \
 && tansuo --help > /dev/null

WORKDIR /var/lib/tansuo
USER 10001:10001
# 8080: API and web UI (and the API's /metrics); 9102: each worker's /livez, /readyz, /metrics.
EXPOSE 8080 9102
# No HEALTHCHECK: one image runs seven different processes on different ports (and
# `tansuo seed` runs for a second). docker-compose.yml and the Helm chart probe each one.
ENTRYPOINT ["tansuo"]
CMD ["--help"]
