"""Embedded page store: one file per page under a directory, fanned out by key prefix."""

from __future__ import annotations

import json
import os
from pathlib import Path

from services.common.model import StoredPage


_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC


class FilePageStore:
    """Each page is ``<root>/<key[:2]>/<key>``: a JSON header line, then the raw bytes."""

    def __init__(self, root: Path) -> None:
        self._root = root
        root.mkdir(parents=True, exist_ok=True)
        self._made: set[str] = set()  # fan-out directories known to exist

    def _path(self, key: str) -> str:
        return os.path.join(self._root, key[:2], key)

    def put(self, key: str, page: StoredPage) -> None:
        # Plain os calls, and each fan-out directory made once: the mkdir and the
        # buffered file object of pathlib cost the crawler more than the write itself.
        path = self._path(key)
        folder = os.path.dirname(path)
        if folder not in self._made:
            os.makedirs(folder, exist_ok=True)
            self._made.add(folder)
        tmp = f"{path}.{os.getpid()}.tmp"
        header = json.dumps(page.meta(), ensure_ascii=False).encode("utf-8")
        try:
            fd = os.open(tmp, _NEW_FILE, 0o644)
        except FileNotFoundError:  # the directory was removed under us (a cleanup)
            os.makedirs(folder, exist_ok=True)
            fd = os.open(tmp, _NEW_FILE, 0o644)
        try:
            view = memoryview(header + b"\n" + page.body)
            while view:  # os.write may write less than it is given
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(tmp, path)  # atomic rename: a crash never leaves half a page behind

    def get(self, key: str) -> StoredPage | None:
        try:
            with open(self._path(key), "rb") as f:
                raw = f.read()
        except FileNotFoundError:
            return None
        header, _, body = raw.partition(b"\n")
        meta = json.loads(header)
        return StoredPage.from_meta(meta, body)

    def ping(self) -> None:
        if not self._root.is_dir():
            raise OSError(f"page store directory {self._root} is missing")
