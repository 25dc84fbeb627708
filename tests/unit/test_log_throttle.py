"""Client-library log lines repeated during an outage are thinned, not lost from view."""

from __future__ import annotations

import logging

from services.common.runtime.log_throttle import RepeatThrottle


def _record(name: str, msg: str, *args: object, level: int = logging.ERROR) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, msg, args, None)


def test_repeats_of_one_client_message_pass_once_per_window_with_a_count() -> None:
    now = [0.0]
    throttle = RepeatThrottle(window_s=10.0, clock=lambda: now[0])
    passed = []
    for second in range(25):
        now[0] = float(second)
        for port in (1, 2):  # the same template with different arguments is the same kind
            record = _record("kafka.net.connection", "Connection to %s failed", port)
            if throttle.filter(record):
                passed.append((second, record.getMessage()))
    assert [s for s, _ in passed] == [0, 10, 20]
    assert passed[0][1] == "Connection to 1 failed"
    assert passed[1][1] == "Connection to 1 failed (19 more like this in the last 10 s not shown)"


def test_other_messages_levels_and_our_own_loggers_are_never_held_back() -> None:
    throttle = RepeatThrottle(window_s=10.0, clock=lambda: 0.0)
    assert throttle.filter(_record("kafka.cluster", "Metadata refresh failed"))
    assert throttle.filter(_record("kafka.cluster", "No node available"))
    assert throttle.filter(_record("kafka.cluster", "Metadata refresh failed", level=logging.WARNING))
    assert not throttle.filter(_record("kafka.cluster", "Metadata refresh failed"))
    for _ in range(3):
        assert throttle.filter(_record("services.common.runtime.service_runtime", "indexer step failed"))
        assert throttle.filter(_record("kafkaesque", "not a client library"))
