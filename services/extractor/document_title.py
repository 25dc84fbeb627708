"""Whether a document's metadata title is a real title, and its first line.

Office programs fill the title in for the user: "Microsoft Word - 文档1.doc" (the
PDF printer's), "PowerPoint 演示文稿", "无标题", a file name. Such a title names no
document and would be what a search shows for it; the rule of issue 35 is the
metadata title when it is real, else the anchor text of the links to the document
(the search result shapes that, services/search/document_results.py, since the
ranker gathers anchor texts after indexing), else the first heading or line.
"""

from __future__ import annotations

import re

# Titles that Office programs, PDF printers and templates write on their own.
_JUNK = re.compile(
    r"""^(
        microsoft\s+(word|powerpoint|excel)\s*-.*
      | (untitled|no\s+title|document|presentation|powerpoint\s+presentation|slide|sheet|book|workbook)\s*\d*
      | (无标题|未命名|无题|文档|新建文档|演示文稿|幻灯片|工作簿|工作表|新建|标题)\s*\d*
      | (新建\s*)?(microsoft\s+)?(office\s+)?(word|excel|powerpoint|wps)\s*(文档|文字文稿|演示文稿|表格|工作表)\s*\d*
      | (powerpoint|wps)\s*演示\s*文稿?\s*\d*
      | [\s\d\W_]*
    )$""",
    re.IGNORECASE | re.VERBOSE,
)
_FILE_NAME = re.compile(r"(?i)\.(docx?|xlsx?|pptx?|pdf|wps|et|dps|odt|ods|odp|rtf|txt|csv|html?|tmp)$")
FIRST_LINE_CHARS = 120


def real_title(title: str) -> str:
    """``title`` with spaces collapsed, or "" when it is one a program made up."""
    title = " ".join(title.replace("\x00", "").split())
    if not title or _JUNK.match(title) or _FILE_NAME.search(title):
        return ""
    return title


def first_line(body: str) -> str:
    """The first line of text worth a heading: at most FIRST_LINE_CHARS characters.
    Lines are taken one at a time: splitting a whole body cost more than reading a
    small spreadsheet's cells (docs/benchmarks.md)."""
    start = 0
    while start <= len(body):
        end = body.find("\n", start)
        if end < 0:
            end = len(body)
        line = body[start:end].strip(" \f\t")
        if any(map(str.isalnum, line)):
            return line[:FIRST_LINE_CHARS]
        start = end + 1
    return ""
