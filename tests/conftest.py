"""Real servers for integration tests, each a session fixture started on demand."""

pytest_plugins = [
    "tests.servers.redis_server",
    "tests.servers.s3_server",  # before kafka_broker, which imports it
    "tests.servers.kafka_broker",
    "tests.servers.es_server",
]
