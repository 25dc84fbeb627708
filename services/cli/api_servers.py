"""The API's process entrypoints, as the command line reaches them: through the
``tansuo.servers`` entry points of the installed package (pyproject.toml), so that
`tansuo` depends on what the API offers to run, never on its modules.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

GROUP = "tansuo.servers"


def api_server(name: str) -> Callable[..., Any]:
    """The entrypoint ``name`` of the ``tansuo.servers`` group (serve_ui, ui_workers,
    serve_service, serve_in_process; services/api/serving.py says what each does)."""
    found = entry_points(group=GROUP, name=name)
    if not found:
        raise RuntimeError(f"no {GROUP} entry point {name!r}: reinstall Tansuo (bash scripts/install.sh)")
    return next(iter(found)).load()
