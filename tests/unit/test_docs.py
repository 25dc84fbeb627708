"""The README stays a front page, and no link between the documents points nowhere.

The README is what a newcomer reads first: at most 150 lines, and its set-up block is
exactly the two commands that install and run Tansuo. The rest lives in docs/, whose
pages link to one another by file and heading; a heading renamed or a page moved must
fail here, not on a reader.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCUMENTS = [README, *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]
SETUP = [
    "bash scripts/demo.sh    # install, crawl Debian's Chinese manuals served locally, "
    "open the UI on http://127.0.0.1:8080/",
    "bash scripts/test.sh    # install with test dependencies and run the whole test suite",
]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _outside_code(text: str) -> list[str]:
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a page's headings: lower case, punctuation dropped,
    spaces as hyphens, a repeated heading numbered."""
    seen: dict[str, int] = {}
    anchors = set()
    for line in _outside_code(path.read_text(encoding="utf-8")):
        heading = re.match(r"#+\s+(.*)", line)
        if heading:
            slug = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 150
    blocks = re.findall(r"```sh\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    setup = [block for block in blocks if "scripts/" in block]
    assert [block.splitlines() for block in setup] == [SETUP]


@pytest.mark.parametrize("document", DOCUMENTS, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_of_a_document_reaches_its_file_and_heading(document: Path) -> None:
    broken = []
    for line in _outside_code(document.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path, _, anchor = target.partition("#")
            dest = (document.parent / path).resolve() if path else document
            if not dest.exists():
                broken.append(target)
            elif anchor and dest.suffix == ".md" and anchor not in _anchors(dest):
                broken.append(target)
    assert broken == []
