"""Every error Tansuo raises on purpose, in one small hierarchy.

Callers catch by kind, never by backend: a command line prints a ``BadInput`` as one
line and exits 2, the API answers it with 400, and answers ``BackendUnavailable`` with
503; a service reconnects after ``BackendUnavailable`` and stops on ``ConfigError``.
Each class also derives from the built-in its kind belongs to (``ValueError``,
``ConnectionError``, ``RuntimeError``), so a handler of the built-in catches it too.
"""

from __future__ import annotations


class TansuoError(Exception):
    """Base of every error Tansuo raises on purpose."""


class BadInput(TansuoError, ValueError):
    """A user's input is wrong (a URL, a query, a file, a flag): say what, in one line."""


class ConfigError(TansuoError, ValueError):
    """A setting names a backend that does not exist or is malformed: no retry helps."""


class BackendUnavailable(TansuoError, ConnectionError):
    """A backend cannot be reached now; the same call may succeed later."""


class BackendError(TansuoError, RuntimeError):
    """A backend answered, with an error that retrying the same call will not fix."""


class IndexUnavailable(BackendUnavailable):
    """The search index cannot be read or written now (gone, closed, unreachable)."""


class IndexWriterBusy(TansuoError, RuntimeError):
    """A single-writer index (tantivy) opened for writing while another process
    writes it; it opens once that process has exited."""



class BadMessage(TansuoError, ValueError):
    """A bus message that cannot be read: it is logged and skipped, never retried."""


class NotFound(TansuoError, LookupError):
    """What a command or request names does not exist (a host, a document)."""
