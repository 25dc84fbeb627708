"""Keeping a process's analysis in step with the operator's dictionaries.

Each dictionary is read from up to two places: the text saved in the console (the
``DictionaryStore``, shared by every process of a deployment), or, when none was ever
saved, the shipped defaults (synonyms and stop words have some, user words none); plus
a file named by a setting (``TANSUO_ANALYSIS_USER_WORDS_FILE`` and its siblings), whose
entries add to the others. Every process that analyses text (the API, the indexer, the
ranker) runs a ``DictionarySync``: it loads them at start, then looks every
``analysis_refresh_s`` seconds whether the store's version or a file changed, and if so
installs the result into services/common/analysis (a new segmenter is built off the
request path, then swapped in).
"""

from __future__ import annotations

import hashlib
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from services.common.analysis import dictionary_version, stop_words, synonyms, words
from services.common.config import Settings
from services.common.domain.dictionaries import NAMES, STOP_WORDS, SYNONYMS, USER_WORDS, EditedText
from services.common.ports import DictionaryStore
from services.common.runtime.periodic import Periodic
from services.dictionaries.rules import PARSERS as _PARSERS
from services.dictionaries.rules import Problem

log = logging.getLogger(__name__)

def default_text(name: str) -> str:
    """The shipped defaults of a dictionary, as text in its own format."""
    if name == SYNONYMS:
        return synonyms.default_rules()
    if name == STOP_WORDS:
        return " ".join(sorted(stop_words.DEFAULT_STOP_WORDS)) + "\n"
    return ""


def user_words_digest(entries: dict[str, int | None]) -> str:
    """A short name for a set of user words: the reanalysis job records which it applied."""
    if not entries:
        return ""
    text = "\n".join(f"{w} {f or ''}" for w, f in sorted(entries.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class SourceReport:
    """One source of one dictionary, as the console shows it."""

    origin: str  # console | defaults | file
    text: str
    entries: int
    problems: tuple[Problem, ...]
    saved_at: float = 0.0
    path: str = ""  # of a file


@dataclass
class Installed:
    """What this process applies now."""

    store_version: str = ""
    files: dict[str, tuple[float, int]] = field(default_factory=dict)  # path -> (mtime, size)
    texts: dict[str, tuple[str, ...]] = field(default_factory=dict)  # dictionary -> its source texts
    user_words: str = ""  # digest
    reports: dict[str, list[SourceReport]] = field(default_factory=dict)
    loaded_at: float = 0.0
    error: str = ""  # the last failed refresh, "" when the last one worked


class DictionarySync:
    """Loads the dictionaries into this process's analysis and keeps them current."""

    def __init__(self, cfg: Settings, store: Callable[[], DictionaryStore]) -> None:
        self._cfg = cfg
        self._store = store  # called on use: a process whose store is down still starts
        self._files: dict[str, Path | None] = {
            USER_WORDS: cfg.analysis_user_words_file,
            SYNONYMS: cfg.analysis_synonyms_file,
            STOP_WORDS: cfg.analysis_stop_words_file,
        }
        self._lock = threading.Lock()
        self.installed = Installed()
        self._periodic = Periodic("dictionary-sync", cfg.analysis_refresh_s, self.refresh)

    def start(self, block: bool = True) -> DictionarySync:
        """Load (now, or with ``block`` False at once in the thread: a server starts
        without waiting for the store), then refresh in a daemon thread. A failure is
        logged and retried."""
        if block:
            self.refresh()
        self._periodic.start(at_once=not block)
        return self

    def stop(self) -> None:
        self._periodic.stop()

    def _file_stamps(self) -> dict[str, tuple[float, int]]:
        stamps = {}
        for path in self._files.values():
            if path is not None:
                try:
                    st = os.stat(path)
                    stamps[str(path)] = (st.st_mtime, st.st_size)
                except OSError:
                    stamps[str(path)] = (-1.0, -1)
        return stamps

    def refresh(self, force: bool = False) -> bool:
        """Install the dictionaries if they changed since the last look; whether they did.
        Never raises: an unreachable store keeps what is installed, and says so."""
        with self._lock:
            try:
                return self._refresh(force)
            except Exception as exc:  # the store down, a file unreadable: keep the last good ones
                if not self.installed.error:
                    log.warning("dictionaries: cannot refresh, keeping the ones in use: %s", exc)
                self.installed.error = str(exc) or type(exc).__name__
                return False

    def _refresh(self, force: bool) -> bool:
        store = self._store()
        version = store.version()
        stamps = self._file_stamps()
        current = self.installed
        if not force and version == current.store_version and stamps == current.files and current.loaded_at:
            current.error = ""
            return False
        edited = store.load()
        changed = self._install(edited)
        current.store_version, current.files, current.loaded_at, current.error = version, stamps, time.time(), ""
        return changed

    def _sources(self, name: str, edited: dict[str, EditedText]) -> list[SourceReport]:
        mine = edited.get(name)
        if mine is not None:
            parsed = _PARSERS[name](mine.text)
            sources = [SourceReport("console", mine.text, parsed.entries, tuple(parsed.problems), mine.saved_at)]
        else:
            text = default_text(name)
            parsed = _PARSERS[name](text)
            sources = [SourceReport("defaults", text, parsed.entries, tuple(parsed.problems))]
        path = self._files[name]
        if path is not None:
            try:
                text = Path(path).read_text(encoding="utf-8-sig")
            except (OSError, UnicodeDecodeError) as exc:
                problem = Problem(0, str(path), f"无法读取文件：{exc}")
                sources.append(SourceReport("file", "", 0, (problem,), path=str(path)))
            else:
                parsed = _PARSERS[name](text)
                sources.append(SourceReport("file", text, parsed.entries, tuple(parsed.problems), path=str(path)))
        return sources

    def _install(self, edited: dict[str, EditedText]) -> bool:
        """Parse and install what changed; user words first, since the checks of the
        other two segment their entries with them."""
        current = self.installed
        changed = False
        for name in NAMES:
            sources = self._sources(name, edited)
            texts = tuple(s.text for s in sources)
            current.reports[name] = sources
            if texts == current.texts.get(name):
                continue
            combined = _PARSERS[name]("\n".join(texts))
            if name == USER_WORDS:
                digest = user_words_digest(combined.user_words)
                if digest != current.user_words:
                    words.set_user_words(sorted(combined.user_words.items()))
                    current.user_words = digest
                    # The others' entries are checked by how they segment: check again.
                    current.texts.pop(SYNONYMS, None)
                    current.texts.pop(STOP_WORDS, None)
            elif name == SYNONYMS:
                synonyms.set_table({w: tuple(names) for w, names in combined.synonyms.items()})
            else:
                stop_words.set_stop_words(combined.stop_words)
            current.texts[name] = texts
            changed = True
        if changed:
            dictionary_version.bump()
            log.info("dictionaries: installed (user words %s)", current.user_words or "none")
        return changed

