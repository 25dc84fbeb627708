"""The table of every chart value in deploy/helm/README.md, made from values.yaml.

Like helm-docs: a key's description is the ``# --`` comment above it (continued on the
comment lines that follow), and a documented key that holds an object or a list is one
row with its whole default. Every leaf must be documented itself or under a documented
parent; ``--check`` fails when one is not, or when the README's table is stale.

    python deploy/helm/values_table.py            # rewrite the table in the README
    python deploy/helm/values_table.py --check    # exit 1 if it is stale or a key lacks a comment
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
VALUES = HERE / "tansuo" / "values.yaml"
README = HERE / "README.md"
START, END = "<!-- values-table:start -->", "<!-- values-table:end -->"
_KEY = re.compile(r"^(?P<indent> *)(?P<key>[A-Za-z_][A-Za-z0-9_]*):(?:\s|$)")


@dataclass
class Row:
    path: str
    description: str
    default: Any


def documented_keys(text: str) -> tuple[list[tuple[str, str]], list[str]]:
    """``([(dotted key, description)], [undocumented leaf keys])`` in file order."""
    described: list[tuple[str, str]] = []
    stack: list[tuple[int, str, bool]] = []  # (indent, key, documented here or above)
    pending: list[str] | None = None
    undocumented: list[str] = []
    last: tuple[str, int, bool] | None = None  # the previous key: path, indent, documented
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("# --"):
            pending = [stripped[4:].strip()]
            continue
        if stripped.startswith("#"):
            if pending is not None:
                pending.append(stripped[1:].strip())
            continue
        if not stripped:
            pending = None
            continue
        m = _KEY.match(line)
        if not m or line.lstrip().startswith("- "):
            continue  # a list item or a continued value, not a key
        indent, key = len(m["indent"]), m["key"]
        if last is not None and indent <= last[1] and not last[2]:
            undocumented.append(last[0])  # the previous key was a leaf, and nobody described it
        while stack and stack[-1][0] >= indent:
            stack.pop()
        inherited = bool(stack) and stack[-1][2]
        path = ".".join([k for _, k, _ in stack] + [key])
        if pending is not None and not inherited:
            described.append((path, " ".join(p for p in pending if p)))
        documented = inherited or pending is not None
        stack.append((indent, key, documented))
        last = (path, indent, documented)
        pending = None
    if last is not None and not last[2]:
        undocumented.append(last[0])
    return described, undocumented


def rows() -> tuple[list[Row], list[str]]:
    text = VALUES.read_text(encoding="utf-8")
    values = yaml.safe_load(text)
    described, undocumented = documented_keys(text)
    out = []
    for path, description in described:
        node: Any = values
        for part in path.split("."):
            node = node[part]
        out.append(Row(path, description, node))
    return out, undocumented


def table(rows_: list[Row]) -> str:
    lines = ["| Key | Default | Description |", "|---|---|---|"]
    for r in rows_:
        # "|" would end the cell; outside code, "<cluster>" would read as an HTML tag.
        default = json.dumps(r.default, ensure_ascii=False).replace("|", "\\|")
        description = r.description.replace("|", "\\|").replace("<", "&lt;")
        lines.append(f"| `{r.path}` | `{default}` | {description} |")
    return "\n".join(lines)


def with_table(readme: str, body: str) -> str:
    before, _, rest = readme.partition(START)
    _, _, after = rest.partition(END)
    return f"{before}{START}\n{body}\n{END}{after}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the table is stale or a key lacks a comment")
    args = parser.parse_args(argv)
    found, undocumented = rows()
    if undocumented:
        print(f"values.yaml keys without a '# --' comment: {', '.join(undocumented)}", file=sys.stderr)
    readme = README.read_text(encoding="utf-8")
    if START not in readme or END not in readme:
        print(f"{README.name} lacks the {START} … {END} markers", file=sys.stderr)
        return 1
    updated = with_table(readme, table(found))
    if args.check:
        if updated != readme:
            print(f"{README.name}'s values table is stale: run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 1 if undocumented else 0
    README.write_text(updated, encoding="utf-8")
    return 1 if undocumented else 0


if __name__ == "__main__":
    sys.exit(main())
