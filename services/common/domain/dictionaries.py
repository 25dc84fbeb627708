"""Domain types of the operator's dictionaries: the texts as edited, and the job that
brings already indexed pages to a new user dictionary."""

from __future__ import annotations

from dataclasses import dataclass

# The dictionaries an operator edits, by name.
USER_WORDS = "user_words"  # words the segmenter keeps whole (names, course codes, products)
SYNONYMS = "synonyms"  # groups of words a query finds each other by
STOP_WORDS = "stop_words"  # words a query never requires
NAMES = (USER_WORDS, SYNONYMS, STOP_WORDS)


@dataclass(frozen=True)
class EditedText:
    """One dictionary as the operator saved it: its text, and when."""

    name: str
    text: str
    saved_at: float


@dataclass(frozen=True)
class ReanalysisJob:
    """Re-segmenting every indexed page after the user dictionary changed.

    One indexer at a time owns it (``owner``, renewed by ``heartbeat_at``); another may
    take it over once the owner has been silent for a while. ``cursor`` is the last URL
    done, in URL order, so a taken-over job resumes rather than restarts."""

    job_id: str
    requested_at: float
    state: str  # pending | running | done | failed
    done: int = 0
    total: int = 0
    owner: str = ""
    heartbeat_at: float = 0.0
    cursor: str = ""
    finished_at: float = 0.0
    error: str = ""
    user_words: str = ""  # a digest of the user dictionary it applies

    @property
    def active(self) -> bool:
        return self.state in ("pending", "running")
