#!/usr/bin/env bash
# Makes the base image of every image of a machine without an image registry: Debian
# bookworm (minbase) with Python 3.11 from Debian's own packages, built by debootstrap
# and loaded with `docker import`. The Dockerfile takes it as PYTHON_IMAGE, and the
# images of docker-compose.no-registry.yml (Redis, Tansu, SeaweedFS, noida-db,
# Prometheus) start FROM it. Needs root (debootstrap), debootstrap, and Debian's mirror.
#
#   deploy/no-registry/base-image.sh [IMAGE]      (default tansuo/debian-python:bookworm)
#
# The root filesystem is kept as a tarball in ~/.cache/tansuo/images (TANSUO_CACHE_DIR),
# named after a hash of this script, so a second run, or a new Docker data root, only
# imports it again (seconds instead of about a minute); an image already in Docker with
# the same hash is left alone. Use `docker -H …` through DOCKER_HOST.
set -euo pipefail
image=${1:-tansuo/debian-python:bookworm}
mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
security=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
docker=${DOCKER:-docker}
cache=${TANSUO_CACHE_DIR:-$HOME/.cache/tansuo}/images
key=$(cat "$0" | sha256sum | cut -c1-16)
tarball=$cache/debian-python-bookworm-$key.tar.gz

have=$($docker image inspect "$image" --format '{{ index .Config.Labels "org.tansuo.base-key" }}' 2>/dev/null || true)
if [ "$have" = "$key" ]; then
  echo "$image is up to date ($key)" >&2
  exit 0
fi

if [ ! -s "$tarball" ]; then
  command -v debootstrap >/dev/null || { echo "debootstrap missing: apt-get install debootstrap" >&2; exit 1; }
  [ "$(id -u)" -eq 0 ] || { echo "debootstrap needs root" >&2; exit 1; }
  mkdir -p "$cache"
  work=$(mktemp -d "${TMPDIR:-/var/tmp}/tansuo-base.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  root=$work/root
  echo "debootstrap bookworm into $root (one to five minutes, as fast as the mirror)" >&2
  started=$SECONDS
  # python3-venv: the images make virtualenvs; ca-certificates: pip and apt over HTTPS.
  debootstrap --variant=minbase --include=python3,python3-venv,python-is-python3,ca-certificates \
    bookworm "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log" >&2; exit 1; }
  # Security and point-release updates, as the official Debian images have them.
  cat > "$root/etc/apt/sources.list" <<SOURCES
deb $mirror bookworm main
deb $mirror bookworm-updates main
deb $security bookworm-security main
SOURCES
  # What debian:bookworm-slim leaves out of every package installed later: manuals,
  # documentation and translations, which no container reads.
  cat > "$root/etc/dpkg/dpkg.cfg.d/docker-slim" <<'SLIM'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
SLIM
  # The CAs this host added to its own trust (/usr/local/share/ca-certificates), so that
  # builds behind the same TLS-inspecting proxy as the host reach PyPI and apt; installed
  # the Debian way, they stay in the bundle whenever ca-certificates rebuilds it.
  cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/ca-certificates.crt"
  if compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  fi
  chroot "$root" sh -c 'apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get upgrade -y -q && update-ca-certificates' \
    > "$work/upgrade.log" 2>&1 || { tail -20 "$work/upgrade.log" >&2; exit 1; }
  chroot "$root" apt-get clean
  echo "debootstrap and upgrade took $((SECONDS - started)) s" >&2
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/log/* "$root"/tmp/* \
    "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/usr/share/locale/*
  find "$root/usr/share/doc" -mindepth 1 -not -name copyright -not -type d -delete
  # Like Docker's own images: no machine identity baked in.
  : > "$root/etc/machine-id"
  tar --numeric-owner -C "$root" -czf "$tarball.partial" .
  mv "$tarball.partial" "$tarball"
  # Older tarballs of this cache are of older versions of this script.
  find "$cache" -name 'debian-python-bookworm-*.tar.gz' -not -name "$(basename "$tarball")" -delete
fi

echo "importing $tarball as $image" >&2
$docker import \
  --change "LABEL org.tansuo.base-key=$key" \
  --change 'ENV LANG=C.UTF-8 PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change 'CMD ["python3"]' \
  "$tarball" "$image" >/dev/null
