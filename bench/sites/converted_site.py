"""A copy of a built site with its text put through one of OpenCC's conversions.

The traditional-script site to tune on: ``--convert s2twp`` turns the LibreOffice
zh-CN help into Taiwan's script and wording (函数 → 函式, 对话框 → 對話方塊), so the
folding of a Taiwan page's runs, and what a quote copied from one meets, can be looked
at without looking at the zh-TW help, which is held out (docs/ranking.md, 'The
sites'). Every file is copied; only the HTML is converted, markup and all, which
OpenCC leaves alone but for its Han characters.

    python -m bench.sites.converted_site SOURCE DEST --convert s2twp
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from services.common.analysis.fold import convert


def convert_site(source: Path, dest: Path, config: str) -> int:
    """Copy ``source`` to ``dest`` (replaced), its HTML pages converted; returns how many."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(source, dest)
    pages = sorted(dest.rglob("*.html"))
    for page in pages:
        page.write_text(convert(config, page.read_text(encoding="utf-8")), encoding="utf-8")
    return len(pages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a built site (bench.sites.libreoffice_help_site)")
    parser.add_argument("dest", type=Path, help="where the converted copy goes (replaced)")
    parser.add_argument("--convert", default="s2twp", help="OpenCC configuration (default s2twp)")
    args = parser.parse_args()
    print(f"{convert_site(args.source, args.dest, args.convert)} pages converted into {args.dest}")


if __name__ == "__main__":
    main()
