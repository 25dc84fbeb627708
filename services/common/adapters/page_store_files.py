"""Embedded page store: one file per page under a directory, fanned out by key prefix."""

from __future__ import annotations

import json
import os
from pathlib import Path

from services.common.model import StoredPage


class FilePageStore:
    """Each page is ``<root>/<key[:2]>/<key>``: a JSON header line, then the raw bytes."""

    def __init__(self, root: Path) -> None:
        self._root = root
        root.mkdir(parents=True, exist_ok=True)

    def _path(self, key: str) -> Path:
        return self._root / key[:2] / key

    def put(self, key: str, page: StoredPage) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{key}.{os.getpid()}.tmp")
        header = json.dumps(page.meta(), ensure_ascii=False).encode("utf-8")
        tmp.write_bytes(header + b"\n" + page.body)
        tmp.replace(path)  # atomic rename: a crash never leaves half a page behind

    def get(self, key: str) -> StoredPage | None:
        try:
            raw = self._path(key).read_bytes()
        except FileNotFoundError:
            return None
        header, _, body = raw.partition(b"\n")
        meta = json.loads(header)
        return StoredPage.from_meta(meta, body)

    def ping(self) -> None:
        if not self._root.is_dir():
            raise OSError(f"page store directory {self._root} is missing")
