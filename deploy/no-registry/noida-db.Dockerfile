# An Elasticsearch 8 API for docker-compose.no-registry.yml: noida-db, the one the tests
# run (tests/servers/es_server.py), from its PyPI package (at the version of
# constraints.txt), in place of Elasticsearch. Its binary is run directly. It prints a
# harmless "GLIBC_2.39 not found" warning at start on Debian 12.
ARG BASE_IMAGE=tansuo/debian-python:bookworm
FROM ${BASE_IMAGE} AS fetch
COPY constraints.txt /tmp/constraints.txt
RUN python -m venv /tmp/venv \
 && /tmp/venv/bin/pip install --no-cache-dir --no-deps --constraint /tmp/constraints.txt noida-db \
 && cp /tmp/venv/lib/python3*/site-packages/noida_db/noida-db /usr/local/bin/noida-db

FROM ${BASE_IMAGE}
COPY --from=fetch /usr/local/bin/noida-db /usr/local/bin/noida-db
RUN useradd --system --uid 10012 --no-create-home --shell /usr/sbin/nologin noida \
 && install -d -o noida -g noida -m 0750 /usr/share/elasticsearch/data
USER 10012
EXPOSE 9200
ENTRYPOINT ["noida-db", "start", "--only", "elasticsearch", "--elasticsearch-port", "9200", "--host", "0.0.0.0", \
            "--data-dir", "/usr/share/elasticsearch/data"]
