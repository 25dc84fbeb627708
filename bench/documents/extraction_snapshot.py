"""What extraction makes of every document under some folders, as one JSON line per
file: a before/after check that a change to a reader keeps its output byte-identical.

Each line holds the file's path, its format, title, headings, page count, the caps
that cut it and a SHA-256 of its body (or the reason it was skipped); two runs, on
two commits, are compared with ``--compare``:

    python -m bench.documents.extraction_snapshot DIR [DIR...] --out before.jsonl
    python -m bench.documents.extraction_snapshot DIR [DIR...] --out after.jsonl
    python -m bench.documents.extraction_snapshot --compare before.jsonl after.jsonl
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

from services.extractor.extract_document import extract_document
from services.extractor.extracted_text import DocumentSkipped

# Files that are a site's own pages or lists, not its documents.
_NOT_DOCUMENTS = frozenset({".html", ".json", ".htm"})


def snapshot(path: Path) -> dict[str, object]:
    """One document's extraction, its body as a digest."""
    try:
        found = extract_document(path.read_bytes(), "", f"http://snapshot/{path.name}")
    except DocumentSkipped as exc:
        return {"path": str(path), "skipped": str(exc)}
    return {
        "path": str(path), "format": found.format, "title": found.title, "headings": found.headings,
        "pages": found.pages, "limits": found.limits, "chars": len(found.body),
        "body_sha256": hashlib.sha256(found.body.encode("utf-8", "surrogatepass")).hexdigest(),
    }  # fmt: skip


def compare(before: Path, after: Path) -> int:
    """Prints every file whose line differs; 0 when none does."""
    old = {r["path"]: r for r in map(json.loads, before.read_text("utf-8").splitlines())}
    new = {r["path"]: r for r in map(json.loads, after.read_text("utf-8").splitlines())}
    differ = sorted(p for p in old.keys() | new.keys() if old.get(p) != new.get(p))
    for path in differ:
        print(f"differs: {path}\n  before {old.get(path)}\n  after  {new.get(path)}")
    print(f"{len(old.keys() & new.keys())} files in both, {len(differ)} differ")
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dirs", nargs="*", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    files = sorted(p for d in args.dirs for p in d.rglob("*") if p.is_file() and p.suffix not in _NOT_DOCUMENTS)
    lines = [json.dumps(snapshot(p), ensure_ascii=False) for p in files]
    if args.out:
        args.out.write_text("".join(f"{line}\n" for line in lines), "utf-8")
    else:
        print("\n".join(lines))
    print(f"{len(lines)} files", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
