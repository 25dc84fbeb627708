"""A query string that is not UTF-8 is refused with 400, before any view reads it.

Werkzeug leaves percent-escapes that do not decode as UTF-8 undecoded, so without
this ``q=%ED%A0%80`` (a lone surrogate's bytes) would reach the search as the text
"%ED%A0%80" and be searched as the words "ed a0 80". RFC 3986 leaves a URI's
encoding to the scheme; this API's contract says UTF-8, and anything else is the
client's mistake, said as such.
"""

from __future__ import annotations

from urllib.parse import unquote_to_bytes

from flask import Flask, jsonify, render_template, request
from flask.typing import ResponseReturnValue

from services.api.ui_messages import query_error

MESSAGE = "q is not valid UTF-8: percent-encode the query's UTF-8 bytes"


def is_utf8(query_string: bytes) -> bool:
    """Whether every name and value of ``query_string`` decodes as UTF-8."""
    for pair in query_string.split(b"&"):
        for part in pair.split(b"=", 1):
            try:
                unquote_to_bytes(part.replace(b"+", b" ")).decode("utf-8")
            except UnicodeDecodeError:
                return False
    return True


def init_app(app: Flask) -> None:
    @app.before_request
    def refuse_other_encodings() -> ResponseReturnValue | None:
        if is_utf8(request.query_string):
            return None
        if request.path == "/api" or request.path.startswith("/api/"):
            return jsonify(error=MESSAGE), 400
        return render_template("error.html", code=400, message=query_error(MESSAGE)), 400
