"""A request id for every API request, in the response header and in every log line.

The caller's ``X-Request-ID`` is kept (a load balancer or another service may have
started the trace) when it looks like an id; anything else gets a new one, so a
header cannot smuggle text into the logs.
"""

from __future__ import annotations

import re
import uuid
from contextlib import AbstractContextManager

from flask import Flask, Response, g, request

from services.common.runtime.json_logging import log_context

HEADER = "X-Request-ID"
_ACCEPTABLE = re.compile(r"[A-Za-z0-9._:-]{1,128}")


def init_app(app: Flask) -> None:
    app.before_request(_begin)
    app.after_request(_reply)
    app.teardown_request(_end)


def _begin() -> None:
    given = request.headers.get(HEADER, "")
    g.request_id = given if _ACCEPTABLE.fullmatch(given) else uuid.uuid4().hex
    context = log_context(request_id=g.request_id)
    context.__enter__()
    g.tansuo_log_context = context


def _reply(response: Response) -> Response:
    request_id = g.get("request_id")
    if request_id:
        response.headers[HEADER] = request_id
    return response


def _end(exc: BaseException | None) -> None:
    context: AbstractContextManager[None] | None = g.pop("tansuo_log_context", None)
    if context is not None:
        # Same thread and context as _begin: the server's worker thread serves the
        # next request with no id left over from this one.
        context.__exit__(None, None, None)
