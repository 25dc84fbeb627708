# Prometheus for docker-compose.no-registry.yml: the binary of Debian's package (2.42),
# in place of the prom/prometheus image; the compose file mounts deploy/prometheus/ as
# its configuration. Only the package's own files are taken (dpkg-deb -x): installing
# it would bring the JavaScript libraries of its classic web UI, 400 MB of them (time
# zone data), for pages this stack's users can have from the API and Grafana instead.
ARG BASE_IMAGE=tansuo/debian-python:bookworm
FROM ${BASE_IMAGE} AS fetch
WORKDIR /tmp/prometheus
RUN apt-get update \
 && apt-get download prometheus \
 && dpkg-deb -x prometheus_*.deb /tmp/prometheus/root \
 && rm -rf /var/lib/apt/lists/*

FROM ${BASE_IMAGE}
COPY --from=fetch /tmp/prometheus/root/usr/bin/prometheus /usr/local/bin/prometheus
COPY --from=fetch /tmp/prometheus/root/usr/share/prometheus /usr/share/prometheus
RUN useradd --system --uid 10014 --no-create-home --shell /usr/sbin/nologin prometheus \
 && install -d -o prometheus -g prometheus -m 0750 /prometheus
WORKDIR /prometheus
USER 10014
EXPOSE 9090
ENTRYPOINT ["prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
