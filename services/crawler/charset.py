"""Turn the raw bytes of an HTML page into text, and name the encoding used.

Chinese sites still serve GBK/GB2312 pages, often labelled only in a ``<meta>`` tag
or not at all, and a wrong guess garbles every word the indexer sees. Order of
evidence: a byte-order mark, then the HTTP header, then ``<meta>``, then detection.
A declared label only wins if the bytes actually decode with it (strictly, or with
a handful of bad bytes): a page labelled UTF-8 that is really GBK is common enough
that trusting the label blindly would lose whole sites.
"""

from __future__ import annotations

import codecs
import re

from charset_normalizer import from_bytes
from w3lib.encoding import read_bom, resolve_encoding

# GBK and GB2312 are subsets of GB18030, and pages labelled with them routinely use
# characters outside the label (e.g. rare names), so the superset always decodes them.
_GB_LABELS = frozenset(
    {"gb2312", "gbk", "x-gbk", "cp936", "ms936", "windows-936", "gb_2312-80", "gb_2312",
     "csgb2312", "csgbk", "chinese", "iso-ir-58", "euc-cn", "euccn", "x-euc-cn", "gb18030"}
)
_HEADER_CHARSET = re.compile(r"charset\s*=\s*[\"']?\s*([^\s\"';,]+)", re.I)
# Covers both <meta charset=x> and <meta http-equiv=Content-Type content="...; charset=x">.
_META_CHARSET = re.compile(rb"<meta[^>]*?charset\s*=\s*[\"']?\s*([a-z0-9_.:+-]+)", re.I)
# HTML5 says 1024 bytes; Chinese CMS pages often put long comments or scripts first.
_PRESCAN_BYTES = 8192
_DETECT_BYTES = 64 * 1024  # charset-normalizer is slow on big pages; a prefix is enough
_MAX_BAD_RATIO = 0.01  # a declared label survives up to 1% undecodable characters
# Undeclared Chinese pages are GB (mainland) or Big5 (Taiwan, Hong Kong). Big5 bytes
# nearly always decode without error as GB18030 too (國立臺灣大學 becomes 瓣ミ籓芖厩瓜),
# so decoding without error proves nothing: when both do, the text decides.
_CHINESE_CODECS = ("gb18030", "big5hkscs")
_DETECTOR_NAMES = {"gb18030": "gb18030", "big5": "big5hkscs", "cp950": "big5hkscs", "big5hkscs": "big5hkscs"}


def decode_html(body: bytes, content_type: str = "") -> tuple[str, str]:
    """Return (text, python codec name). Never raises: the last resort decodes with U+FFFD."""
    encoding, bom = read_bom(body)
    if encoding and bom:
        name = codecs.lookup(encoding).name
        return body[len(bom):].decode(name, errors="replace"), name
    declared = _declared_encodings(body, content_type)
    chosen = _first_that_decodes(body, declared)
    if chosen is not None:
        return chosen
    detected = _detect(body)
    if detected is not None:
        return detected
    fallback = declared[0] if declared else "utf-8"
    return body.decode(fallback, errors="replace"), fallback


def resolve_label(label: str) -> str | None:
    """Python codec name for a web charset label, or None if unknown."""
    label = label.strip().strip("\"'").lower()
    if not label:
        return None
    if label in _GB_LABELS:
        return "gb18030"
    name = resolve_encoding(label)
    if name is None:
        try:
            name = codecs.lookup(label).name
        except LookupError:
            return None
    return codecs.lookup(name).name


def header_charset(content_type: str) -> str | None:
    """Codec named by the charset parameter of a Content-Type header."""
    match = _HEADER_CHARSET.search(content_type or "")
    return resolve_label(match.group(1)) if match else None


def meta_charset(body: bytes) -> str | None:
    """Codec named by a <meta> tag near the start of the document."""
    match = _META_CHARSET.search(body[:_PRESCAN_BYTES])
    if not match:
        return None
    name = resolve_label(match.group(1).decode("ascii", "replace"))
    # A UTF-16 page could not have been prescanned as ASCII, so the label is a lie (HTML5).
    if name and name.startswith("utf-16"):
        return "utf-8"
    return name


def _declared_encodings(body: bytes, content_type: str) -> list[str]:
    found = [header_charset(content_type), meta_charset(body)]
    return list(dict.fromkeys(name for name in found if name))


def _first_that_decodes(body: bytes, declared: list[str]) -> tuple[str, str] | None:
    for name in declared:
        try:
            return body.decode(name), name
        except UnicodeDecodeError:
            continue
    for name in declared:
        text = body.decode(name, errors="replace")
        if text.count("\ufffd") <= max(1, int(len(text) * _MAX_BAD_RATIO)):
            return text, name
    return None


def _detect(body: bytes) -> tuple[str, str] | None:
    try:
        return body.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    chinese = _strict_decodes(body, _CHINESE_CODECS)
    if len(chinese) == 1:
        return chinese[0]
    if chinese:
        return _simplified_or_traditional(body, chinese)
    best = from_bytes(body[:_DETECT_BYTES]).best()
    if best is None:
        return None
    try:
        name = codecs.lookup(best.encoding).name
        return body.decode(name, errors="replace"), name
    except LookupError:
        return None


def _strict_decodes(body: bytes, names: tuple[str, ...]) -> list[tuple[str, str]]:
    decoded = []
    for name in names:
        try:
            decoded.append((body.decode(name), name))
        except UnicodeDecodeError:
            continue
    return decoded


def _simplified_or_traditional(body: bytes, candidates: list[tuple[str, str]]) -> tuple[str, str]:
    """The candidate whose text reads as Chinese: charset-normalizer, held to GB18030
    and Big5, judges by character frequencies; GB18030 when it cannot tell."""
    best = from_bytes(body[:_DETECT_BYTES], cp_isolation=["gb18030", "big5"]).best()
    wanted = _DETECTOR_NAMES.get(best.encoding, "gb18030") if best is not None else "gb18030"
    return next((c for c in candidates if c[1] == wanted), candidates[0])
