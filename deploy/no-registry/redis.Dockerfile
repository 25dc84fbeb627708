# Redis for docker-compose.no-registry.yml: Debian's redis-server (Redis 7), the one the
# tests run, in place of the redis image. Built on deploy/no-registry/base-image.sh.
ARG BASE_IMAGE=tansuo/debian-python:bookworm
FROM ${BASE_IMAGE}
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends redis-server \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o redis -g redis -m 0750 /data
WORKDIR /data
# The package's own system user; this image is for Compose, where no runAsNonRoot
# needs a number.
# hadolint ignore=DL3066
USER redis
EXPOSE 6379
# Without a configuration file Redis is in protected mode and refuses other hosts; the
# official image turns that off the same way. The compose network is the only way in.
ENTRYPOINT ["redis-server", "--protected-mode", "no", "--dir", "/data"]
