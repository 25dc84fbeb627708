"""The search app as a WSGI target for servers the load benchmark compares with
gunicorn (granian, waitress): built once per worker process from TANSUO_DATA_DIR,
without the admission middleware, which needs gunicorn's stamps."""

from __future__ import annotations

from typing import Any

from services.api.app import create_app
from services.common.config import Settings


def make_app() -> Any:
    return create_app(Settings())
