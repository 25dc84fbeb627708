"""Builds the third real test site: the LibreOffice help in Simplified Chinese.

Why this one beside the demo and GIMP sites: Debian's ``libreoffice-help-zh-cn`` is
about 2,560 help pages translated almost entirely into Chinese (the GIMP manual is
mostly English), written for office users rather than administrators, so it tests
what such users type: questions, function names inside Chinese (VLOOKUP 函数),
Taiwan wording (試算表, 儲存格) and the names of the products they know (excel, ppt).

The package's own front page (``index.html``) and table of contents (``contents.js``)
are JavaScript, which a crawler does not run; the help pages link to one another, but
from any one page only about 2,270 of them can be reached. So the build writes what a
crawler can follow instead of the scripts: a front page (``index.html``) linking one
contents page per module (``toc/NN.html``, the tree of ``contents.js`` with its own
labels) and one page per help directory (``toc/other-DIR.html``) listing, by title,
every page the tree leaves out. Every help page is then one or two links from the front.
Only the language directory is copied, unchanged: the styles, scripts and images the
pages refer to (``libreoffice-help-common``, 28 MB of them images) are not needed to
crawl or search them.

Same download cache (``apt-get download`` into ``~/.cache/tansuo/debs``) and staging
as ``bench/sites/gimp_site.py``: the site appears in ``dest`` complete, with a marker that
records the page count and the Han share of the text, or not at all. The output depends
only on the package's files, so one package version gives one site.

    python -m bench.sites.libreoffice_help_site DEST           # build (or reuse) the site
    python -m bench.sites.libreoffice_help_site DEST --serve   # and serve it until Ctrl-C
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from lxml import etree
from lxml import html as lxml_html

from services.cli.demo_site import (
    DemoSiteError,
    _unpack,
    build_lock,
    default_cache,
    fetch_packages,
)

PACKAGE = "libreoffice-help-zh-cn"
SOURCE = "usr/share/libreoffice/help"
LANGUAGE = "zh-CN"
LAYOUT_VERSION = 1
MARKER = ".tansuo-libreoffice-help-site.json"
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@dataclass(frozen=True)
class Module:
    """One top-level entry of the help's table of contents."""

    ident: str  # the tree's own id ("02" for Writer)
    label: str  # 文本文档 (Writer)
    tree: str  # its nested list as HTML, links site-relative and without query
    pages: tuple[str, ...]  # every page it links, in order, site-relative


def build_libreoffice_help_site(dest: Path, cache: Path | None = None, language: str = LANGUAGE) -> int:
    """Build the site in ``dest`` unless it is there already; return its help page count.
    ``language`` is the help's own (zh-CN, or zh-TW for the traditional-script help of
    ``libreoffice-help-zh-tw``, a site held out from tuning: docs/ranking.md)."""
    dest = Path(dest)
    done = _marker(dest)
    if done is not None:
        return int(done["pages"])
    with build_lock(dest):
        done = _marker(dest)
        return int(done["pages"]) if done is not None else _build(dest, cache, language)


def _build(dest: Path, cache: Path | None, language: str) -> int:
    if dest.exists() and any(dest.iterdir()):
        raise DemoSiteError(f"{dest} exists and is not a LibreOffice help site built by Tansuo; remove it")
    package = package_of(language)
    deb = fetch_packages([package], Path(cache) if cache is not None else default_cache())[package]
    dest.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        with tempfile.TemporaryDirectory(prefix="tansuo-lohelp-") as unpacked:
            root = Path(unpacked)
            _unpack(deb, root)
            _copy_help(root, stage, language)
        stats = write_navigation(stage, language)
        stats.update(layout=LAYOUT_VERSION, package=deb.name)
        (stage / MARKER).write_text(json.dumps(stats, sort_keys=True))
        os.chmod(stage, 0o755)
        if dest.exists():
            dest.rmdir()  # empty, checked above
        stage.rename(dest)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    built = _marker(dest)
    assert built is not None
    return int(built["pages"])


def site_stats(dest: Path) -> dict:
    """What the marker of a built site records (pages, Han share), or {} when not built."""
    return _marker(Path(dest)) or {}


def package_of(language: str) -> str:
    return f"libreoffice-help-{language.lower()}"


def _copy_help(root: Path, stage: Path, language: str) -> None:
    source = root / SOURCE / language
    if not (source / "contents.js").is_file():
        raise DemoSiteError(f"no {SOURCE}/{language}/contents.js in {package_of(language)}; the package layout changed")
    shutil.copytree(source, stage / language, symlinks=False, ignore_dangling_symlinks=True)
    licence = root / "usr/share/doc" / package_of(language) / "copyright"
    if licence.is_file():
        shutil.copyfile(licence, stage / "COPYRIGHT.txt")


def write_navigation(site: Path, language: str = LANGUAGE) -> dict:
    """Write the front page and the contents pages; return page count and Han share."""
    modules = contents_modules((site / language / "contents.js").read_text(encoding="utf-8"))
    pages = sorted(p.relative_to(site).as_posix() for p in (site / language / "text").rglob("*.html"))
    titles = {page: page_title((site / page).read_bytes()) or page for page in pages}
    listed = {page for module in modules for page in module.pages}
    toc = site / "toc"
    toc.mkdir()
    front: list[str] = []
    for module in modules:
        (toc / f"{module.ident}.html").write_text(
            _page(f"目录：{module.label}", _relative(module.tree, "../")), encoding="utf-8")
        front.append(f'<li><a href="toc/{module.ident}.html">{html.escape(module.label)}</a></li>')
    others = [page for page in pages if page not in listed]
    for directory in sorted({_directory(page) for page in others}):
        items = "".join(f'<li><a href="../{page}">{html.escape(titles[page])}</a></li>'
                        for page in others if _directory(page) == directory)
        (toc / f"other-{directory}.html").write_text(
            _page(f"其他帮助页面：{directory}", f"<ul>{items}</ul>"), encoding="utf-8")
        front.append(f'<li><a href="toc/other-{directory}.html">其他帮助页面：{directory}</a></li>')
    start = f'<p><a href="{language}/text/shared/05/new_help.html">LibreOffice 帮助首页</a></p>'
    script = "简体中文" if language == LANGUAGE else language
    (site / "index.html").write_text(
        _page(f"LibreOffice 帮助（{script}）", f"{start}<ul>{''.join(front)}</ul>"), encoding="utf-8")
    counts = [han_counts(page_text((site / page).read_bytes())) for page in pages]
    han, letters = sum(c[0] for c in counts), sum(c[1] for c in counts)
    return {"pages": len(pages), "pages_in_contents": len(listed & set(pages)),
            "pages_over_200_han": sum(1 for c in counts if c[0] > 200),
            "han_chars": han, "letters": letters, "han_share": round(han / letters, 3) if letters else 0.0}


def han_counts(text: str) -> tuple[int, int]:
    """(Han characters, letters and digits of any script, Han included) in ``text``.

    The Han share of a site is the first over the second: counting letters rather than
    words or bytes, an English word weighs its length, which is what a reader scans.
    """
    return len(_HAN.findall(text)), sum(1 for c in text if c.isalnum())


def contents_modules(contents_js: str) -> list[Module]:
    """The modules of the help's ``contents.js`` (a JavaScript string holding nested lists).

    Links lose their ``?DbPAR=`` query (the pages link one another without it, and one
    page under two URLs would be two pages to a crawler), their ``target`` and the
    checkboxes the tree opens and closes with; labels stay, as the headings of the lists.
    """
    match = re.search(r"innerHTML='(.*)';", contents_js, re.S)
    if match is None:
        raise DemoSiteError("contents.js does not set innerHTML; the package layout changed")
    fragment = match.group(1).replace("\\\n", "\n").replace("\\'", "'")
    tree = lxml_html.fragment_fromstring(fragment, create_parent="div")
    idents = [item.xpath("./input/@id") for item in tree.xpath("./ul/li")]
    for box in tree.xpath(".//input"):
        box.drop_tree()
    for label in tree.xpath(".//label"):
        label.attrib.clear()
        label.tag = "strong"
    modules = []
    for position, item in enumerate(tree.xpath("./ul/li")):
        pages: list[str] = []
        for link in item.iter("a"):
            link.attrib.pop("target", None)
            href = urlsplit(link.get("href", "")).path
            link.set("href", href)
            if href not in pages:
                pages.append(href)
        label = item.find("strong")
        sublist = item.find("ul")
        modules.append(Module(
            ident=idents[position][0] if idents[position] else f"{position + 1:02d}",
            label=label.text_content().strip() if label is not None else "",
            tree=etree.tostring(sublist, encoding="unicode", method="html").strip() if sublist is not None else "",
            pages=tuple(pages)))
    return modules


def page_title(page: bytes) -> str:
    """A help page's <title>, whitespace collapsed."""
    root = lxml_html.fromstring(page.decode("utf-8", "replace"))  # the help is all UTF-8
    return " ".join(" ".join(root.xpath("//title//text()")).split())


def page_text(page: bytes) -> str:
    """The text a reader sees in a help page's display area (no scripts, navigation, debug footer)."""
    root = lxml_html.fromstring(page.decode("utf-8", "replace"))
    area = root.xpath("//*[@id='DisplayArea']")
    if not area:
        return ""
    for junk in area[0].xpath(".//script|.//style"):
        junk.drop_tree()
    return " ".join(" ".join(area[0].itertext()).split())


def _relative(fragment: str, prefix: str) -> str:
    return re.sub(r'href="(?![a-z]+:)', f'href="{prefix}', fragment)


def _directory(page: str) -> str:
    return page.split("/")[2]  # zh-CN/text/<module>/...


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="zh-CN"><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>'
            f"<body><h1>{html.escape(title)}</h1>{body}</body></html>\n")  # fmt: skip


def _marker(dest: Path) -> dict | None:
    try:
        marker = json.loads((dest / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return marker if marker.get("layout") == LAYOUT_VERSION else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.sites.libreoffice_help_site", description=__doc__.splitlines()[0])
    parser.add_argument("dest", type=Path)
    parser.add_argument("--serve", action="store_true", help="serve the site on 127.0.0.1 until interrupted")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--language", default=LANGUAGE, help="zh-CN (default) or zh-TW")
    args = parser.parse_args(argv)
    pages = build_libreoffice_help_site(args.dest, language=args.language)
    stats = site_stats(args.dest)
    print(f"{pages} help pages in {args.dest} ({stats.get('pages_in_contents')} in the contents tree), "
          f"Han share of the text {stats.get('han_share')}")
    if args.serve:
        from services.cli.static_site_server import SiteServer

        site = SiteServer(args.dest, port=args.port).start()
        print(f"serving {site.url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            site.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
