"""How an HTTP error is answered: JSON for the API, a Chinese page for people.

A 405 carries the ``Allow`` header RFC 9110 15.5.6 requires (the methods the resource
takes); the framework's error object holds them, but a handler that builds its own
response drops its headers unless it copies them.
"""

from __future__ import annotations

from flask import Response, jsonify, make_response, render_template
from werkzeug.exceptions import HTTPException

from services.api.ui_messages import http_error


def http_error_response(exc: HTTPException, wants_json: bool) -> Response:
    code = exc.code or 500
    if wants_json:
        response = jsonify(error=exc.description or exc.name)
    else:
        # The framework's descriptions are English; a page of ours says it in Chinese.
        response = make_response(render_template("error.html", code=code, message=http_error(code)))
    response.status_code = code
    for name, value in exc.get_headers():
        if name.lower() != "content-type":
            response.headers[name] = value
    return response
