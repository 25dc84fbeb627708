"""Writes held for one ``_bulk`` request: in the order they were made, bounded by count
and bytes, sent when the next one would cross a bound and at the index commit.

One request for a batch of pages instead of one a page: the round trips, not
Elasticsearch's work, are what a batch sent a page at a time waits on. The commit's
refresh rides on the last request (``?refresh=true``) when it is the only one since
the previous commit, which saves one more round trip.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from elasticsearch import Elasticsearch
from elasticsearch.serializer import JsonSerializer

from services.common.errors import BackendError

# Each page can carry a 200k-character body three times over (raw, tokens and
# sub-words, 3 bytes a Han character): keep a request far below the server's 100 MB.
MAX_BYTES = 20 * 1024 * 1024
MAX_ACTIONS = 500
# 429 "too many requests" is Elasticsearch shedding load: the rejected items are sent
# again after 0.5, 1 and 2 s, as the client's bulk helpers do; anything else fails.
_RETRIES_ON_429 = 3
_BACKOFF_S = 0.5

_JSON = JsonSerializer()


class IndexWriteError(BackendError):
    """Elasticsearch rejected some documents of a bulk request."""


@dataclass(frozen=True)
class _Action:
    lines: bytes  # the action line and its source line, serialised once
    missing_ok: bool  # a 404 means "not there", which is what a delete or a link update may find


class BulkBuffer:
    """Not thread-safe: the adapter holds its write lock around every call."""

    def __init__(self, es: Elasticsearch, max_actions: int = MAX_ACTIONS, max_bytes: int = MAX_BYTES) -> None:
        self._es = es
        self._max_actions = max_actions
        self._max_bytes = max_bytes
        self._actions: list[_Action] = []
        self._bytes = 0
        self.sent_since_refresh = False  # a request went out since the last refresh

    def __len__(self) -> int:
        return len(self._actions)

    def add(self, action: Mapping[str, Any], source: Mapping[str, Any] | None, missing_ok: bool) -> None:
        """Hold one write (its action line and, but for a delete, its source line);
        what is held goes first when this one would make the request too big."""
        lines = _JSON.dumps(action) + b"\n" + (_JSON.dumps(source) + b"\n" if source is not None else b"")
        if self._actions and (len(self._actions) >= self._max_actions or self._bytes + len(lines) > self._max_bytes):
            self.send(refresh=False)
        self._actions.append(_Action(lines, missing_ok))
        self._bytes += len(lines)

    def drop(self) -> int:
        """Forget what is held (a writer closed without committing); returns how many."""
        dropped = len(self._actions)
        self._actions, self._bytes = [], 0
        return dropped

    def send(self, refresh: bool) -> bool:
        """Send what is held in one request, with the refresh on it if asked; returns
        whether a request made the refresh (False: nothing held, or a retry came
        after the refresh, so the caller refreshes)."""
        actions, self._actions, self._bytes = self._actions, [], 0
        if not actions:
            return False
        self.sent_since_refresh = True
        errors: list[Mapping[str, Any]] = []
        for attempt in range(_RETRIES_ON_429 + 1):
            # Lines serialised once, here, sent as they are (the client's NDJSON
            # serialiser passes bytes through; its annotations name only dicts).
            payload: Any = b"".join(a.lines for a in actions)
            answer = self._es.bulk(operations=payload, refresh=refresh or None)
            retry = []
            if answer.get("errors"):
                for action, item in zip(actions, answer["items"], strict=True):
                    result = next(iter(item.values()))
                    status = int(result.get("status", 500))
                    if status < 300 or (status == 404 and action.missing_ok):
                        continue
                    if status == 429 and attempt < _RETRIES_ON_429:
                        retry.append(action)
                    else:
                        errors.append(result)
            if not retry:
                break
            time.sleep(_BACKOFF_S * 2**attempt)
            actions = retry
        if errors:
            first = errors[0].get("error", errors[0])
            raise IndexWriteError(f"{len(errors)} writes were rejected; first: {first}")
        made_refresh = refresh and attempt == 0
        if made_refresh:
            self.sent_since_refresh = False
        return made_refresh
