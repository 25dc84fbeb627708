"""Retry-After comes as delta-seconds or as an HTTP date (RFC 9110 section 10.2.3)."""

from __future__ import annotations

from datetime import UTC
from email.utils import parsedate_to_datetime


def retry_after_until(value: str, now: float, cap_s: float = 86_400.0) -> float | None:
    """Absolute time (epoch seconds) until which the host asked us to wait, or None when
    the header is missing or unreadable. Capped so a hostile value cannot park a host forever."""
    value = (value or "").strip()
    if not value:
        return None
    if value.isascii() and value.isdigit():  # str.isdigit also takes ² and other digits
        return now + min(float(value), cap_s)
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:  # the asctime form names no zone: every HTTP date is GMT
        when = when.replace(tzinfo=UTC)
    return min(max(when.timestamp(), now), now + cap_s)
