"""Builds the second real test site: the GIMP user manual in Simplified Chinese.

Why this one beside the demo site: Debian's gimp-help-zh-cn is about 685 interlinked
XHTML pages written by other people, partly translated (many titles and headings stay
English while bodies are Chinese), so it tests mixed-script queries and ranking on a
site unlike the Debian manuals. Search-quality figures are only trusted when they hold
on both.

Same download and cache as the demo site (``apt-get download`` into
``~/.cache/tansuo/debs``, unpacked with ``dpkg-deb``), and the same staging: the site
appears in ``dest`` complete, with a marker, or not at all.

    python -m bench.sites.gimp_site DEST      # DEST/index.html is the manual's front page
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from services.cli.demo_site import (
    DemoSiteError,
    _unpack,
    build_lock,
    default_cache,
    fetch_packages,
)

PACKAGE = "gimp-help-zh-cn"
SOURCE = "usr/share/gimp/2.0/help/zh_CN"
LAYOUT_VERSION = 1
MARKER = ".tansuo-gimp-site.json"


def build_gimp_site(dest: Path, cache: Path | None = None) -> int:
    """Build the site in ``dest`` unless it is there already; return its page count."""
    dest = Path(dest)
    done = _pages(dest)
    if done is not None:
        return done
    with build_lock(dest):
        return _pages(dest) or _build(dest, cache)


def _build(dest: Path, cache: Path | None) -> int:
    if dest.exists() and any(dest.iterdir()):
        raise DemoSiteError(f"{dest} exists and is not a GIMP help site built by Tansuo; remove it")
    deb = fetch_packages([PACKAGE], Path(cache) if cache is not None else default_cache())[PACKAGE]
    dest.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        with tempfile.TemporaryDirectory(prefix="tansuo-gimp-") as unpacked:
            root = Path(unpacked)
            _unpack(deb, root)
            source = root / SOURCE
            if not (source / "index.html").is_file():
                raise DemoSiteError(f"{deb.name} has no {SOURCE}/index.html; the package layout changed")
            shutil.copytree(source, stage, dirs_exist_ok=True, symlinks=False, ignore_dangling_symlinks=True)
            licence = root / "usr/share/doc" / PACKAGE / "copyright"
            if licence.is_file():
                shutil.copyfile(licence, stage / "COPYRIGHT.txt")
        pages = sum(1 for _ in stage.rglob("*.html"))
        (stage / MARKER).write_text(json.dumps({"layout": LAYOUT_VERSION, "pages": pages, "package": deb.name}))
        os.chmod(stage, 0o755)
        if dest.exists():
            dest.rmdir()  # empty, checked above
        stage.rename(dest)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    pages_now = _pages(dest)
    assert pages_now is not None
    return pages_now


def _pages(dest: Path) -> int | None:
    try:
        marker = json.loads((dest / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return int(marker["pages"]) if marker.get("layout") == LAYOUT_VERSION else None


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m bench.sites.gimp_site DEST")
    print(f"{build_gimp_site(Path(sys.argv[1]))} pages in {sys.argv[1]}")
