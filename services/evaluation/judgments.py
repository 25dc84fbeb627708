"""The judgments file: one judged query per line, tab-separated.

    # comment lines and blank lines are ignored
    type<TAB>query<TAB>relevant URL[<TAB>relevant URL ...]

``type`` groups queries in the report (title, title-words, body-quote, question ...):
letters, digits, ``-`` and ``_``. ``query`` is sent as typed. A relevant URL is
absolute (``http://`` or ``https://``) or site-relative (``/faq/ch-basic.html``),
which is resolved against a base URL given by the caller, so a judged set written for
one site works wherever that site is served. Relevance is binary: every listed URL
counts as relevant, every other URL as not.

Errors name the file and line and say what is wrong, since these files are written by
hand.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit

from services.common.errors import BadInput

_TYPE = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


class JudgmentsError(BadInput):
    """A judgments file that cannot be used; the message names the line."""


@dataclass(frozen=True)
class Judgment:
    qtype: str
    query: str
    relevant: tuple[str, ...]  # absolute URLs, in file order
    line: int = 0


def parse_judgments(text: str, source: str = "judgments", base_url: str = "") -> list[Judgment]:
    """Every judged query in ``text``; JudgmentsError on the first bad line."""
    out: list[Judgment] = []
    seen: dict[tuple[str, str], int] = {}
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.rstrip("\r\n")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        judgment = _parse_line(line, n, source, base_url)
        key = (judgment.qtype, judgment.query)
        if key in seen:
            raise JudgmentsError(f"{source}:{n}: query {judgment.query!r} of type {judgment.qtype} "
                                 f"is already judged on line {seen[key]}; merge the URLs into one line")
        seen[key] = n
        out.append(judgment)
    if not out:
        raise JudgmentsError(f"{source}: no judged queries (expected lines of type<TAB>query<TAB>URL...)")
    return out


def _parse_line(line: str, n: int, source: str, base_url: str) -> Judgment:
    fields = line.split("\t")
    where = f"{source}:{n}"
    if len(fields) < 3:
        hint = " (fields must be separated by tabs, not spaces)" if "\t" not in line else ""
        raise JudgmentsError(f"{where}: expected type<TAB>query<TAB>URL..., found {len(fields)} field(s){hint}")
    qtype, query = fields[0].strip(), fields[1].strip()
    if not _TYPE.match(qtype):
        raise JudgmentsError(f"{where}: query type {qtype!r} must be 1-40 letters, digits, '-' or '_'")
    if not query:
        raise JudgmentsError(f"{where}: empty query")
    urls = [_resolve(u.strip(), where, base_url) for u in fields[2:] if u.strip()]
    if not urls:
        raise JudgmentsError(f"{where}: no relevant URL for query {query!r}")
    return Judgment(qtype, query, tuple(dict.fromkeys(urls)), n)


def _resolve(url: str, where: str, base_url: str) -> str:
    if url.startswith(("http://", "https://")):
        if not urlsplit(url).hostname:
            raise JudgmentsError(f"{where}: URL {url!r} has no host")
        return url
    if url.startswith("/"):
        if not base_url:
            raise JudgmentsError(f"{where}: site-relative URL {url!r} needs a base URL (--base-url http://host:port/)")
        return urljoin(base_url, url)
    raise JudgmentsError(f"{where}: {url!r} is not a URL: write http(s)://host/path or a site-relative /path")


def read_judgments(path: Path, base_url: str = "") -> list[Judgment]:
    """Parse a judgments file (UTF-8)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise JudgmentsError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise JudgmentsError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    return parse_judgments(text, source=str(path), base_url=base_url)


def format_judgments(judgments: Iterable[Judgment], header: Iterable[str] = ()) -> str:
    """The file text for ``judgments``; ``header`` lines become comments."""
    lines = [f"# {h}" for h in header]
    lines.append("# type\tquery\trelevant URL ...")
    for j in judgments:
        if "\t" in j.query or "\n" in j.query:
            raise ValueError(f"query {j.query!r} holds a tab or newline")
        lines.append("\t".join((j.qtype, j.query, *j.relevant)))
    return "\n".join(lines) + "\n"
