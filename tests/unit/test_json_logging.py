"""The JSON log formatter: one object per line, with the ids of the work in hand."""

from __future__ import annotations

import json
import logging
import sys

from services.common.runtime.json_logging import (
    JsonFormatter,
    current_context,
    log_context,
)


def _record(msg: str, *args: object, level: int = logging.INFO, **extra: object) -> logging.LogRecord:
    record = logging.LogRecord("tansuo.test", level, __file__, 1, msg, args, None)
    for key, value in extra.items():
        setattr(record, key, value)
    return record


def _format(record: logging.LogRecord, service: str = "indexer") -> dict[str, object]:
    line = JsonFormatter(service=service).format(record)
    assert "\n" not in line
    return json.loads(line)


def test_a_record_becomes_one_json_object_with_the_standard_fields() -> None:
    entry = _format(_record("indexed %d pages", 3))
    assert entry["message"] == "indexed 3 pages"
    assert entry["level"] == "INFO"
    assert entry["logger"] == "tansuo.test"
    assert entry["service"] == "indexer"
    assert str(entry["time"]).endswith("Z") and "T" in str(entry["time"])


def test_chinese_text_stays_readable_and_newlines_stay_on_one_line() -> None:
    line = JsonFormatter(service="crawler").format(_record("标题：网络配置\n第二行"))
    assert "网络配置" in line
    assert "\n" not in line
    assert json.loads(line)["message"] == "标题：网络配置\n第二行"


def test_ids_from_the_log_context_are_added_and_removed_after_the_block() -> None:
    with log_context(job_id="lease-1"):
        with log_context(request_id="req-9"):
            inner = _format(_record("x"))
        outer = _format(_record("y"))
    after = _format(_record("z"))
    assert inner["job_id"] == "lease-1" and inner["request_id"] == "req-9"
    assert outer["job_id"] == "lease-1" and "request_id" not in outer
    assert "job_id" not in after and current_context() == {}


def test_extra_fields_are_logged_but_cannot_replace_the_standard_ones() -> None:
    entry = _format(_record("down", backend="index", retry_in_s=4.0, service="spoofed"))
    assert entry["backend"] == "index"
    assert entry["retry_in_s"] == 4.0
    assert entry["service"] == "indexer"


def test_an_exception_is_one_field_holding_the_traceback() -> None:
    try:
        raise RuntimeError("disk on fire")
    except RuntimeError:
        record = logging.LogRecord("t", logging.ERROR, __file__, 1, "failed", (), sys.exc_info())
    entry = _format(record)
    assert "RuntimeError: disk on fire" in str(entry["exception"])
    assert "Traceback" in str(entry["exception"])


def test_values_json_cannot_encode_are_logged_as_text() -> None:
    entry = _format(_record("odd", payload=object(), path=b"raw"))
    assert str(entry["payload"]).startswith("<object object")
    assert entry["path"] == "b'raw'"
