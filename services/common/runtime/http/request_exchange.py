"""One whole request in, one whole response out: what a worker thread does.

The poller has already read the request's bytes (services/common/runtime/http/
bounded_worker.py), so gunicorn's parser reads them from memory, and the response is
written into a buffer that the poller sends. A thread therefore never waits on a
client: not for a request that trickles in, not for a client that reads its answer
slowly. Its time is the application's time only.
"""

from __future__ import annotations

import errno
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from gunicorn import util
from gunicorn.http import wsgi
from gunicorn.http.message import Request
from gunicorn.http.parser import RequestParser

QUEUED_AT = "tansuo.queued_at"  # environ key: time.monotonic() when the request was read whole

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


class _PollerFramedRequest(Request):
    """A request whose ``Expect`` the poller has dealt with: it answers 100-continue
    itself and ignores other expectations, as RFC 9110 allows (nginx does the same),
    so gunicorn must not answer them again or refuse them with an HTML 417."""

    _policy_expect_continue = False


class _PollerFramedParser(RequestParser):
    mesg_class = _PollerFramedRequest


class ResponseBuffer:
    """Stands in for the client socket in gunicorn's response writer: every byte
    written is kept for the poller to send."""

    def __init__(self) -> None:
        self.data = bytearray()

    def sendall(self, data: bytes) -> None:
        self.data += data

    def send(self, data: bytes) -> int:
        self.data += data
        return len(data)

    def gettimeout(self) -> float:  # gunicorn's write_nonblock asks
        return 0.0

    def setblocking(self, flag: bool) -> None:
        pass

    def fileno(self) -> int:  # no file descriptor: gunicorn never uses sendfile (cfg.sendfile is off)
        raise OSError(errno.EBADF, "a response buffer has no file descriptor")


@dataclass(frozen=True)
class Exchange:
    """The request's bytes and where it came from, as the worker hands it to a thread."""

    data: bytes
    client: Any  # the peer address tuple, as accept() returned it
    server: Any  # the listening address
    queued_at: float


@dataclass(frozen=True)
class Answer:
    data: bytes
    keep_alive: bool


def exchange(worker: Any, app: WsgiApp, request: Exchange) -> Answer:
    """Parse ``request`` with gunicorn's parser, run ``app``, collect the response.
    ``worker`` is the gunicorn worker (its cfg, log and error page)."""
    out = ResponseBuffer()
    parser = _PollerFramedParser(worker.cfg, [request.data], request.client)
    req = None
    try:
        req = next(parser)
        keep_alive = _serve(worker, app, req, out, request)
        # The poller framed exactly one request: bytes left over mean the two parsers
        # disagree on its length, and the connection cannot be trusted for another.
        if keep_alive and (not parser.finish_body() or parser.unreader.buf.getvalue()):
            keep_alive = False
        return Answer(bytes(out.data), keep_alive)
    except StopIteration:
        return Answer(bytes(out.data), False)
    except Exception as exc:
        if req is not None and out.data:  # the response had begun: a second one would corrupt it
            worker.log.exception("Error handling request")
            return Answer(bytes(out.data), False)
        out.data.clear()
        worker.handle_error(req, out, request.client, exc)
        return Answer(bytes(out.data), False)


def _serve(worker: Any, app: WsgiApp, req: Any, out: ResponseBuffer, request: Exchange) -> bool:
    """gunicorn's ThreadWorker.handle_request, writing into ``out``; whether the
    connection may carry another request."""
    environ: dict[str, Any] = {}
    resp = None
    try:
        worker.cfg.pre_request(worker, req)
        resp, environ = wsgi.create(req, out, request.client, request.server, worker.cfg)
        environ["wsgi.multithread"] = True
        environ[QUEUED_AT] = request.queued_at
        if not worker.alive or not worker.cfg.keepalive:
            resp.force_close()
        respiter = app(environ, resp.start_response)
        try:
            if isinstance(respiter, environ["wsgi.file_wrapper"]):
                resp.write_file(respiter)
            else:
                for item in respiter:
                    resp.write(item)
            resp.close()
        finally:
            if hasattr(respiter, "close"):
                respiter.close()
        return not resp.should_close()
    except (Exception, SystemExit):
        if resp is not None and resp.headers_sent:
            worker.log.exception("Error handling request")
            raise StopIteration() from None
        util.reraise(*sys.exc_info())
        raise  # not reached: reraise raises
    finally:
        try:
            worker.cfg.post_request(worker, req, environ, resp)
        except Exception:
            worker.log.exception("Exception in post_request hook")
