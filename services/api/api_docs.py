"""GET /api/openapi.json (the API's contract) and GET /api/docs (the same, to read).

The document is one maintained file, services/api/openapi.json, rather than pieces
gathered from the views: a contract is reviewed as a whole, a change to it shows as
one diff, and tests/integration/test_openapi.py holds it to the app's routes both
ways, so a route added without its entry (or an entry left behind) fails the suite.
The page renders that file in the browser with a small script of our own
(static/api_docs.js): no CDN, so it works on a machine with no internet.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from flask import Blueprint, Response, render_template
from flask.typing import ResponseReturnValue

bp = Blueprint("api_docs", __name__)


@cache
def openapi_document() -> dict[str, Any]:
    """The OpenAPI 3.1 document shipped with the package, parsed once per process."""
    return json.loads(resources.files("services.api").joinpath("openapi.json").read_text(encoding="utf-8"))


@bp.get("/openapi.json")
def openapi() -> ResponseReturnValue:
    """The document as stored (sorted keys would scatter its reading order)."""
    body = json.dumps(openapi_document(), ensure_ascii=False)
    return Response(body, content_type="application/json; charset=utf-8")


@bp.get("/docs")
def docs() -> ResponseReturnValue:
    """A page that lists every operation of /api/openapi.json; the text is in the
    page even without JavaScript only as a link to the JSON."""
    return render_template("api_docs.html", title=openapi_document()["info"]["title"])
