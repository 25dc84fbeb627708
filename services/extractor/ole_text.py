"""Text of the legacy binary Office formats: Word 97-2003 (doc, and WPS Writer's wps)
and PowerPoint 97-2003 (ppt, and WPS Presentation's dps), read from their OLE
compound-file streams with olefile (BSD). Excel's xls and WPS's et go to calamine.

Word keeps its text in the WordDocument stream in pieces listed by the piece table
(the Clx in the table stream, [MS-DOC] 2.9.38): each piece is either UTF-16LE or
8-bit "compressed" text. PowerPoint keeps text in TextCharsAtom (UTF-16LE) and
TextBytesAtom (8-bit) records of the PowerPoint Document stream ([MS-PPT] 2.9.x).
antiword and catdoc do the same in C but are GPL; these readers find all of the text,
where catdoc loses some (docs/benchmarks.md, "Which library reads which format").
"""

from __future__ import annotations

import struct

import olefile

from services.extractor.extracted_text import DocumentLimits, DocumentSkipped, ExtractedText, TextSink

# FIB offsets ([MS-DOC] 2.5.1): flags, the main text's length in characters, the Clx.
_FIB_IDENT, _FIB_FLAGS, _FIB_CCP_TEXT, _FIB_FC_CLX = 0x0000, 0x000A, 0x004C, 0x01A2
_WORD_IDENT = 0xA5EC
_F_ENCRYPTED, _F_WHICH_TABLE = 0x0100, 0x0200
# 8-bit pieces are cp1252, except these bytes, which Word maps to other code points.
_COMPRESSED_EXCEPTIONS = {0x82: "\u201a", 0x83: "\u0192", 0x84: "\u201e", 0x85: "\u2026", 0x86: "\u2020",
                          0x87: "\u2021", 0x88: "\u02c6", 0x89: "\u2030", 0x8A: "\u0160", 0x8B: "\u2039",
                          0x8C: "\u0152", 0x91: "\u2018", 0x92: "\u2019", 0x93: "\u201c", 0x94: "\u201d",
                          0x95: "\u2022", 0x96: "\u2013", 0x97: "\u2014", 0x98: "\u02dc", 0x99: "\u2122",
                          0x9A: "\u0161", 0x9B: "\u203a", 0x9C: "\u0153", 0x9F: "\u0178"}  # fmt: skip
# Word's control characters: paragraph and cell ends become line ends, fields' codes
# (between 0x13 and 0x14) are dropped and their results kept.
_FIELD_BEGIN, _FIELD_SEP, _FIELD_END = "\x13", "\x14", "\x15"
_WORD_CONTROLS = str.maketrans({"\r": "\n", "\x07": "\n", "\x0b": "\n", "\x0c": "\n", "\x1e": "-", "\x1f": "",
                                "\x01": "", "\x08": "", "\x02": "", "\x05": ""})  # fmt: skip


def _open(data: bytes) -> olefile.OleFileIO:
    try:
        return olefile.OleFileIO(data)
    except (OSError, ValueError) as exc:
        raise DocumentSkipped("malformed", str(exc)) from None


_PID_CODEPAGE, _PID_TITLE = 1, 2  # property ids of SummaryInformation ([MS-OLEPS])


def ole_title(ole: olefile.OleFileIO) -> str:
    """The title in the SummaryInformation stream, in the code page it declares. Only
    that stream's properties are read (``get_metadata`` parses DocumentSummaryInformation
    too: half the time of identifying a small spreadsheet)."""
    try:
        props = ole.getproperties("\x05SummaryInformation")
    except Exception:
        return ""
    return decode_title(props.get(_PID_TITLE), props.get(_PID_CODEPAGE))


def decode_title(raw: object, codepage: object) -> str:
    """A Title property as olefile gives it (text, or 8-bit bytes in the CodePage
    property's code page, cp1252 when there is none), stripped; "" for anything else."""
    if not raw:
        return ""
    if isinstance(raw, str):
        return raw.strip()
    if not isinstance(raw, bytes):
        return ""
    page = (codepage if isinstance(codepage, int) and codepage else 1252) & 0xFFFF  # signed: 65001 reads as -535
    encoding = "utf-16-le" if page == 1200 else "utf-8" if page == 65001 else f"cp{page}"
    try:
        return raw.decode(encoding, errors="replace").strip("\x00 ").strip()
    except LookupError:
        return raw.decode("latin-1").strip("\x00 ").strip()


# --- Word (doc, wps)


def read_word(data: bytes, limits: DocumentLimits, fmt: str = "doc") -> ExtractedText:
    ole = _open(data)
    try:
        if not ole.exists("WordDocument"):
            raise DocumentSkipped("malformed", "no WordDocument stream")
        word = ole.openstream("WordDocument").read()
        if len(word) < _FIB_FC_CLX + 8 or struct.unpack_from("<H", word, _FIB_IDENT)[0] != _WORD_IDENT:
            raise DocumentSkipped("malformed", "not a Word 97 file")
        flags = struct.unpack_from("<H", word, _FIB_FLAGS)[0]
        if flags & _F_ENCRYPTED:
            raise DocumentSkipped("encrypted")
        table_name = "1Table" if flags & _F_WHICH_TABLE else "0Table"
        if not ole.exists(table_name):
            raise DocumentSkipped("malformed", f"no {table_name} stream")
        table = ole.openstream(table_name).read()
        (ccp_text,) = struct.unpack_from("<i", word, _FIB_CCP_TEXT)
        fc_clx, lcb_clx = struct.unpack_from("<II", word, _FIB_FC_CLX)
        text = _piece_text(word, table[fc_clx : fc_clx + lcb_clx], max(0, ccp_text), limits.max_chars)
        title = ole_title(ole)
    except (struct.error, IndexError) as exc:
        raise DocumentSkipped("malformed", str(exc)) from None
    finally:
        ole.close()
    sink = TextSink(limits)
    sink.page(_drop_field_codes(text).translate(_WORD_CONTROLS))
    return ExtractedText(fmt, title, [], sink.body(), 1, sink.cut)


def _piece_text(word: bytes, clx: bytes, ccp_text: int, max_chars: int) -> str:
    """The main text (character positions 0 to ccp_text) through the piece table."""
    pos = 0
    while pos < len(clx) and clx[pos] == 0x01:  # Prc entries (property modifiers) come first
        (size,) = struct.unpack_from("<H", clx, pos + 1)
        pos += 3 + size
    if pos >= len(clx) or clx[pos] != 0x02:
        raise DocumentSkipped("malformed", "no piece table")
    (lcb,) = struct.unpack_from("<I", clx, pos + 1)
    plc = clx[pos + 5 : pos + 5 + lcb]
    n = (len(plc) - 4) // 12
    cps = struct.unpack_from(f"<{n + 1}I", plc, 0)
    out: list[str] = []
    taken = 0
    for i in range(n):
        start, end = cps[i], min(cps[i + 1], ccp_text)
        if start >= end:
            if start >= ccp_text:
                break
            continue
        (fc,) = struct.unpack_from("<I", plc, 4 * (n + 1) + 8 * i + 2)
        count = end - start
        if fc & 0x40000000:
            offset = (fc & 0x3FFFFFFF) // 2
            raw = word[offset : offset + count]
            out.append("".join(_COMPRESSED_EXCEPTIONS.get(b) or chr(b) for b in raw))
        else:
            offset = fc & 0x3FFFFFFF
            out.append(word[offset : offset + 2 * count].decode("utf-16-le", errors="replace"))
        taken += count
        if taken > max_chars * 2:  # field codes and controls are dropped later: some slack
            break
    return "".join(out)


def _drop_field_codes(text: str) -> str:
    """Keep a field's result (after 0x14), drop its code (HYPERLINK "...", PAGE)."""
    if _FIELD_BEGIN not in text:
        return text
    out: list[str] = []
    depth = 0
    in_code: list[bool] = []
    for ch in text:
        if ch == _FIELD_BEGIN:
            depth += 1
            in_code.append(True)
        elif ch == _FIELD_SEP and depth:
            in_code[-1] = False
        elif ch == _FIELD_END and depth:
            depth -= 1
            in_code.pop()
        elif not (in_code and in_code[-1]):
            out.append(ch)
    return "".join(out)


# --- PowerPoint (ppt, dps)

_CONTAINER = 0xF
_SLIDE, _MAIN_MASTER, _NOTES, _SLIDE_LIST, _SLIDE_PERSIST = 0x03EE, 0x03F8, 0x03F0, 0x0FF0, 0x03F3
_TEXT_CHARS, _TEXT_BYTES = 0x0FA0, 0x0FA8
_SKIPPED_CONTAINERS = frozenset({_MAIN_MASTER, _NOTES})


def read_powerpoint(data: bytes, limits: DocumentLimits, fmt: str = "ppt") -> ExtractedText:
    ole = _open(data)
    try:
        if not ole.exists("PowerPoint Document"):
            raise DocumentSkipped("malformed", "no PowerPoint Document stream")
        if ole.exists("EncryptedSummary"):
            raise DocumentSkipped("encrypted")
        stream = ole.openstream("PowerPoint Document").read()
        title = ole_title(ole)
    finally:
        ole.close()
    slides = _slide_texts(stream)
    sink = TextSink(limits)
    for text in slides:
        if not sink.page(text):
            break
    headings = [slides[0].split("\n", 1)[0]] if slides and slides[0] else []
    return ExtractedText(fmt, title, headings, sink.body(), len(slides), sink.cut)


def _slide_texts(stream: bytes) -> list[str]:
    """Each slide's text, from the slides' own drawings when they hold text, else from
    the SlideListWithText records that older writers use (never both: they repeat)."""
    own: list[list[str]] = []  # per SlideContainer
    listed: list[list[str]] = []  # per SlidePersistAtom of the slide list
    # (end offset, record type) of the containers we are inside
    stack: list[tuple[int, int]] = []
    pos, end = 0, len(stream)
    skip_until = -1
    while pos + 8 <= end:
        while stack and pos >= stack[-1][0]:
            stack.pop()
        ver_inst, rec_type, rec_len = struct.unpack_from("<HHI", stream, pos)
        body = pos + 8
        if rec_len > end - body:
            break  # a record past the stream's end: the rest is damaged
        if ver_inst & 0xF == _CONTAINER:
            if rec_type in _SKIPPED_CONTAINERS and skip_until < body:
                skip_until = body + rec_len
            if rec_type == _SLIDE and body >= skip_until:
                own.append([])
            stack.append((body + rec_len, rec_type))
            pos = body
            continue
        if body >= skip_until:
            if rec_type == _SLIDE_PERSIST and any(t == _SLIDE_LIST for _, t in stack):
                listed.append([])
            elif rec_type in (_TEXT_CHARS, _TEXT_BYTES):
                raw = stream[body : body + rec_len]
                text = raw.decode("utf-16-le", errors="replace") if rec_type == _TEXT_CHARS else raw.decode("latin-1")
                in_list = any(t == _SLIDE_LIST for _, t in stack)
                target = listed if in_list else own if any(t == _SLIDE for _, t in stack) else None
                if target:
                    target[-1].append(text.replace("\r", "\n").replace("\x0b", "\n"))
        pos = body + rec_len
    chosen = own if any(any(t.strip() for t in s) for s in own) else listed
    return ["\n".join(parts) for parts in chosen]
