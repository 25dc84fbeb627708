"""The Lua scripts of the Redis adapters, kept as files in ``lua/`` so that an editor
highlights them and a reviewer reads them as Lua; each script's header says its KEYS
and ARGV."""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def lua_script(name: str) -> str:
    """The text of ``lua/<name>``, read once per process."""
    return resources.files(__package__).joinpath("lua", name).read_text(encoding="utf-8")
