"""Real servers for integration tests, each a session fixture started on demand."""

from hypothesis import settings

# Property tests check behaviour, never speed: Hypothesis's default 200 ms deadline per
# example failed a 0.6 ms example that a loaded machine held up for 253 ms.
settings.register_profile("tansuo", deadline=None)
settings.load_profile("tansuo")

pytest_plugins = [
    "tests.servers.redis_server",
    "tests.servers.s3_server",  # before kafka_broker, which imports it
    "tests.servers.kafka_broker",
    "tests.servers.es_server",
]
