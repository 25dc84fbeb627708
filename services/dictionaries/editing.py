"""Editing the dictionaries, as the console and the API do: save or reset one, ask for
the reanalysis, and say where things stand (which of it needs a reindex)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from services.common.domain.dictionaries import NAMES, ReanalysisJob
from services.common.errors import BadInput
from services.common.ports import DictionaryStore
from services.dictionaries.rules import PARSERS, Parsed
from services.dictionaries.sync import DictionarySync, SourceReport

MAX_TEXT_BYTES = 2 * 1024 * 1024


class UnknownDictionary(BadInput):
    pass


def _check(name: str, text: str | None = None) -> None:
    if name not in NAMES:
        raise UnknownDictionary(f"unknown dictionary {name[:40]!r}: one of {', '.join(NAMES)}")
    if text is not None and len(text.encode("utf-8", "surrogatepass")) > MAX_TEXT_BYTES:
        raise BadInput(f"the text is too long: at most {MAX_TEXT_BYTES // (1024 * 1024)} MiB")


def save(store: DictionaryStore, sync: DictionarySync, name: str, text: str, now: float) -> Parsed:
    """Store ``text`` as the dictionary ``name`` and apply it in this process at once
    (the others within ``analysis_refresh_s``); what reading it found."""
    _check(name, text)
    text = text.replace("\r\n", "\n")
    store.save(name, text, now)
    sync.refresh(force=True)
    return PARSERS[name](text)


def reset(store: DictionaryStore, sync: DictionarySync, name: str) -> None:
    """Back to the shipped defaults (the file's entries still add to them)."""
    _check(name)
    store.remove(name)
    sync.refresh(force=True)


@dataclass(frozen=True)
class Status:
    reports: dict[str, list[SourceReport]]
    user_words: str  # digest of the user words in use
    job: ReanalysisJob | None
    # Pages indexed before the user words changed keep the old split until reanalysed.
    needs_reanalysis: bool
    error: str  # why the dictionaries could not be read lately, "" if they could


def status(store: DictionaryStore, sync: DictionarySync) -> Status:
    installed = sync.installed
    job = store.reanalysis()
    done_with = job.user_words if job is not None and job.state == "done" else ""
    needs = installed.user_words != done_with and not (job is not None and job.active)
    return Status(installed.reports, installed.user_words, job, needs, installed.error)


def request_reanalysis(store: DictionaryStore, sync: DictionarySync, now: float) -> ReanalysisJob:
    return store.request_reanalysis(now, sync.installed.user_words)


def problem_json(parsed_problems: Any) -> list[dict[str, Any]]:
    return [dataclasses.asdict(p) for p in parsed_problems]


def status_json(s: Status) -> dict[str, Any]:
    job = None if s.job is None else dataclasses.asdict(s.job)
    dictionaries = {}
    for name in NAMES:
        sources = s.reports.get(name, [])
        console = next((src for src in sources if src.origin == "console"), None)
        dictionaries[name] = {
            "text": console.text if console else None,
            "saved_at": console.saved_at if console else None,
            "sources": [
                {"origin": src.origin, "path": src.path or None, "entries": src.entries,
                 "problems": problem_json(src.problems)}
                for src in sources
            ],
        }  # fmt: skip
    return {"dictionaries": dictionaries, "user_words_digest": s.user_words, "reanalysis": job,
            "reanalysis_needed": s.needs_reanalysis, "error": s.error or None}  # fmt: skip

