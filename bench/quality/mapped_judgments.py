"""The LibreOffice help site's hand-judged queries, for the same help in another
language: each relevant page's path with the language swapped (/zh-CN/ → /zh-TW/),
kept where the other site has the page, and the query as typed or converted.

The two languages' help is made from the same files, so a page judged relevant for a
question is the same page in both. Mapped onto the zh-TW site, which no weight was
chosen on, the set measures hand-written questions, typos and nicknames on a site
held out: as typed (a mainland user, simplified script, mainland words) or through
OpenCC's ``s2twp`` (traditional script, the Taiwan phrases OpenCC knows).

    python -m bench.quality.mapped_judgments SITE_DIR OUT.tsv [--language zh-TW] [--convert s2twp]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from services.common.analysis.fold import convert

SOURCE = Path(__file__).resolve().parents[1] / "queries" / "libreoffice-help.tsv"


def mapped_lines(site: Path, language: str, conversion: str = "") -> list[str]:
    """The judgment lines of ``SOURCE`` mapped onto the help site in ``site``."""
    out: list[str] = []
    for line in SOURCE.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, query, *urls = line.split("\t")
        paths = [u.replace("/zh-CN/", f"/{language}/", 1) for u in urls]
        kept = [p for p in paths if (site / p.lstrip("/")).is_file()]
        if kept:
            out.append("\t".join([kind, convert(conversion, query) if conversion else query, *kept]))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality.mapped_judgments", description=__doc__.splitlines()[0])
    parser.add_argument("site", type=Path, help="the other language's help site (bench.sites.libreoffice_help_site)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--language", default="zh-TW")
    parser.add_argument("--convert", default="", help="an OpenCC conversion for the queries (s2twp)")
    args = parser.parse_args(argv)
    lines = mapped_lines(args.site, args.language, args.convert)
    header = f"# {SOURCE.name} mapped to /{args.language}/ ({args.convert or 'as typed'}): bench.quality.mapped_judgments\n"
    args.out.write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"{len(lines)} queries written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
