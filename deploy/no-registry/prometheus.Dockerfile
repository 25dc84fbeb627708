# Prometheus for docker-compose.no-registry.yml: Debian's package (2.42), in place of the
# prom/prometheus image; the compose file mounts deploy/prometheus/ as its configuration.
ARG BASE_IMAGE=tansuo/debian-python:bookworm
FROM ${BASE_IMAGE}
# hadolint ignore=DL3008
RUN apt-get update \
 && apt-get install -y --no-install-recommends prometheus \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o prometheus -g prometheus -m 0750 /prometheus
WORKDIR /prometheus
USER prometheus
EXPOSE 9090
ENTRYPOINT ["prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
