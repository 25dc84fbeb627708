"""Real servers for integration tests, each a session fixture started on demand."""

import os
from collections.abc import Iterator

import pytest
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


@pytest.fixture(autouse=True)
def _umask_as_found() -> Iterator[None]:
    """A test that runs the CLI in this process (its main sets the umask to 077 so the
    data directory is private) leaves the umask as it found it: a later test's files
    for another user, such as a container's secret, stay readable."""
    mask = os.umask(0o022)
    os.umask(mask)
    yield
    os.umask(mask)
