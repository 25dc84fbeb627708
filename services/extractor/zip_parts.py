"""The parts of an OOXML or ODF package, read within a cap on their inflated size.

A ZIP bomb (a part that inflates to gigabytes) is refused by what the ZIP's directory
declares, before a byte is inflated; a part whose data inflates past its declared size
is cut there by ``zipfile`` itself, which then fails its CRC check: a lying header
makes the file malformed, never large.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO

from services.extractor.extracted_text import DocumentSkipped

# A deflated part inflates to at most about 1,032 times its size (deflate's limit);
# a directory that claims more is lying, and such a file is not read.
_MAX_RATIO = 1100


class Package:
    """One ZIP package; ``open`` counts each part's declared size against the cap."""

    def __init__(self, data: bytes, max_unzipped_bytes: int) -> None:
        try:
            self._zip = zipfile.ZipFile(io.BytesIO(data))
        except (zipfile.BadZipFile, ValueError, OSError) as exc:
            raise DocumentSkipped("malformed", str(exc)) from None
        self._left = max_unzipped_bytes
        self.names = set(self._zip.namelist())

    def check_all(self) -> None:
        """Refuse the whole package when its parts together exceed the cap: for readers
        (calamine) that inflate the parts themselves."""
        total = 0
        for info in self._zip.infolist():
            self._plausible(info)
            total += info.file_size
        if total > self._left:
            raise DocumentSkipped("zip_bomb", f"{total} bytes inflated")

    @staticmethod
    def _plausible(info: zipfile.ZipInfo) -> None:
        if info.compress_size and info.file_size > _MAX_RATIO * info.compress_size + 1024:
            raise DocumentSkipped("zip_bomb", f"{info.filename}: ratio beyond deflate's")

    @contextmanager
    def open(self, name: str) -> Iterator[IO[bytes]]:
        """A part as a stream; DocumentSkipped("zip_bomb") when it would pass the cap."""
        try:
            info = self._zip.getinfo(name)
        except KeyError:
            raise DocumentSkipped("malformed", f"no {name}") from None
        self._plausible(info)
        if info.file_size > self._left:
            raise DocumentSkipped("zip_bomb", f"{name}: {info.file_size} bytes inflated")
        self._left -= info.file_size
        try:
            with self._zip.open(info) as part:
                yield part
        except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, RuntimeError) as exc:
            # RuntimeError: a part encrypted with a ZIP password.
            raise DocumentSkipped("malformed", f"{name}: {exc}") from None

    def read(self, name: str) -> bytes:
        with self.open(name) as part:
            return part.read()
