"""The base of the tests' hand-written HTTP sites: silent, and one call per answer."""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler


class QuietHandler(BaseHTTPRequestHandler):
    """A handler that logs nothing and answers in one call; the servers' handle_error
    swallows the crawler hanging up mid-answer."""

    def log_message(self, *args: object) -> None:
        pass

    def reply(self, status: int, body: bytes, content_type: str = "text/html", **headers: str) -> None:
        """``headers`` by keyword, underscores for dashes (``Retry_After="5"``)."""
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for name, value in headers.items():
            self.send_header(name.replace("_", "-"), value)
        self.end_headers()
        self.wfile.write(body)
