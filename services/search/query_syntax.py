"""The query language of the search box, parsed in one place.

What people type into every search box, and nothing a backend's own parser would
read: a backend never sees the raw string.

- words: ``设置 页面``: every word is wanted (see query_plan for how strictly);
- ``"exact phrase"``: the page must hold this string, whatever the segmenter does
  (Chinese quotes “…” work too; an unclosed quote runs to the end of the query);
- ``-word`` and ``-"phrase"``: pages holding it are left out;
- ``site:host``: only pages of that host (several are OR'ed), ``-site:host`` leaves
  a host out;
- ``a OR b``: either will do (``|`` too);
- ``filetype:pdf``: only documents of that format (several are OR'ed; ``-filetype:pdf``
  leaves it out); the formats are services/extractor/document_types.py's.

Operators also work as a Chinese input method types them: ``site：`` with a
full-width colon, ``－word`` with a full-width minus, ``｜`` and ``ＯＲ``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from services.common.domain.url_canonical import BadUrl, canonicalize
from services.common.errors import BadInput

MAX_SITE_CHARS = 253  # longest DNS name
_QUOTES = str.maketrans({"“": '"', "”": '"', "＂": '"', "„": '"'})
_TOKEN = re.compile(
    r"""(?P<neg>[-－](?=\S))?
        (?:
            (?P<site>site[:：])(?P<host>[^\s"]*)
          | (?P<filetype>filetype[:：])(?P<format>[^\s"]*)
          | "(?P<quoted>[^"]*)(?P<closed>")?
          | (?P<word>[^\s"]+)
        )""",
    re.VERBOSE | re.IGNORECASE,
)
_OR = frozenset({"OR", "|", "ＯＲ", "｜"})
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


class QuerySyntaxError(BadInput):
    """The query cannot be run as typed; the message says why, fit for the user."""


@dataclass(frozen=True)
class Part:
    """One thing the user asked for: free text (segmented later) or an exact phrase."""

    text: str
    quoted: bool = False


@dataclass(frozen=True)
class ParsedQuery:
    groups: tuple[tuple[Part, ...], ...]  # every group is wanted; any part of a group will do
    excluded: tuple[Part, ...] = ()
    sites: tuple[str, ...] = ()
    excluded_sites: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    filetypes: tuple[str, ...] = ()
    excluded_filetypes: tuple[str, ...] = ()  # what the parser had to guess, to tell the user

    @property
    def parts(self) -> tuple[Part, ...]:
        return tuple(p for group in self.groups for p in group)


def clean_site(raw: str) -> str:
    """A host as ``site:`` and the site parameter take it, spelled as the index files
    it (the crawler's canonical URLs): scheme and path dropped, lower case, a Chinese
    domain name in punycode, no trailing dot, no default port (:443 or :80 without a
    scheme, the one of the scheme with it)."""
    text = raw.strip()
    bad = QuerySyntaxError("site must be a host name such as www.example.cn")
    if not text or len(text) > 2 * MAX_SITE_CHARS or any(c.isspace() for c in text):
        raise bad
    with_scheme = _SCHEME.match(text) is not None
    try:
        host = urlsplit(canonicalize(text if with_scheme else f"http://{text}")).netloc
    except (BadUrl, UnicodeError, ValueError):
        raise bad from None
    if not with_scheme and host.endswith((":80", ":443")):
        host = host.rsplit(":", 1)[0]
    if not host or len(host) > MAX_SITE_CHARS:
        raise bad
    return host


def clean_filetype(raw: str) -> str:
    """A format as ``filetype:`` takes it: pdf, docx, wps... (a leading dot and case
    do not matter; the others of a format's family are not implied: doc is not docx)."""
    from services.extractor.document_types import FORMATS

    name = raw.strip().lstrip(".").lower()
    if name not in FORMATS:
        raise QuerySyntaxError(f"filetype: takes one of {', '.join(FORMATS)}")
    return name


class _Builder:
    def __init__(self) -> None:
        self.groups: list[list[Part]] = []
        self.excluded: list[Part] = []
        self.sites: list[str] = []
        self.excluded_sites: list[str] = []
        self.filetypes: list[str] = []
        self.excluded_filetypes: list[str] = []
        self.notes: list[str] = []
        self.join_next = False

    def add(self, part: Part) -> None:
        if self.join_next and self.groups:
            self.groups[-1].append(part)
        else:
            self.groups.append([part])
        self.join_next = False


def parse(query: str) -> ParsedQuery:
    """Parse the search box's text; QuerySyntaxError when nothing is left to search for."""
    b = _Builder()
    for m in _TOKEN.finditer(query.translate(_QUOTES)):
        negative = bool(m.group("neg"))
        if m.group("site"):
            if not m.group("host"):
                raise QuerySyntaxError("site: needs a host name after it, such as site:www.example.cn")
            (b.excluded_sites if negative else b.sites).append(clean_site(m.group("host")))
        elif m.group("filetype"):
            (b.excluded_filetypes if negative else b.filetypes).append(clean_filetype(m.group("format")))
        elif m.group("quoted") is not None:
            if not m.group("closed"):
                b.notes.append("a quote was not closed: the phrase runs to the end of the query")
            text = m.group("quoted").strip()
            if text:
                b.excluded.append(Part(text, True)) if negative else b.add(Part(text, True))
        elif m.group("word") in _OR and not negative:
            b.join_next = bool(b.groups)
        elif negative:
            b.excluded.append(Part(m.group("word")))
        else:
            b.add(Part(m.group("word")))
    if not b.groups and not b.sites and not b.filetypes:
        if b.excluded or b.excluded_sites or b.excluded_filetypes:
            raise QuerySyntaxError("a query of only exclusions (-word, -site:) finds nothing: add a word to search for")
        raise QuerySyntaxError("q must contain something to search for")
    return ParsedQuery(
        groups=tuple(tuple(g) for g in b.groups),
        excluded=tuple(b.excluded),
        sites=tuple(dict.fromkeys(b.sites)),
        excluded_sites=tuple(dict.fromkeys(b.excluded_sites)),
        notes=tuple(b.notes),
        filetypes=tuple(dict.fromkeys(b.filetypes)),
        excluded_filetypes=tuple(dict.fromkeys(b.excluded_filetypes)),
    )
