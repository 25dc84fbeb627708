"""Builds the demo site: Debian's five Simplified-Chinese manuals as one static site.

Why these: they are real, interlinked Chinese HTML (about 255 pages) that nobody in
this project wrote, under free licences, and any Debian or Ubuntu machine can fetch
them with ``apt-get download`` without installing anything.

The site is staged beside ``dest`` and renamed into place when complete, so ``dest``
either holds a whole site (with a marker file) or does not exist; a second call finds
the marker and returns at once.
"""

from __future__ import annotations

import contextlib
import fcntl
import html
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from services.common.errors import TansuoError

# Bump when the manual list or layout changes, so old sites get rebuilt.
LAYOUT_VERSION = 2
MARKER = ".tansuo-demo-site.json"


class DemoSiteError(TansuoError, RuntimeError):
    """The demo site could not be built; the message says what to do about it."""


@dataclass(frozen=True)
class Manual:
    package: str
    source: str  # directory inside the package
    folder: str  # directory under the site root
    entry: str  # start page, relative to folder
    title: str
    blurb: str
    only: str = "*"  # glob of files to take from a flat source directory; "*" = whole tree
    document: str = ""  # a document of the package (a PDF) published beside the pages and linked


MANUALS: tuple[Manual, ...] = (
    Manual(
        "debian-handbook",
        "usr/share/doc/debian-handbook/html/zh-CN",
        "handbook",
        "index.html",
        "Debian 管理员手册",
        "从安装到日常运维：软件包管理、网络服务、安全与虚拟化，面向系统管理员的完整指南。",
    ),
    Manual(
        "debian-reference-zh-cn",
        "usr/share/debian-reference",
        "debian-reference",
        "index.zh-cn.html",
        "Debian 参考手册",
        "Debian 系统管理的速查手册：APT、系统初始化、文件系统、网络、编程工具等。",
        only="*.zh-cn.html",  # the directory also holds a PDF and a gzipped text copy
        document="debian-reference.zh-cn.pdf",
    ),
    Manual(
        "debian-faq-zh-cn",
        "usr/share/doc/debian/FAQ/zh-cn",
        "faq",
        "index.zh-cn.html",
        "Debian 常见问题",
        "关于 Debian 项目、获取与安装、软件包和升级的常见问题解答。",
    ),
    Manual(
        "maint-guide-zh-cn",
        "usr/share/doc/maint-guide-zh-cn/html",
        "maint-guide",
        "index.zh-cn.html",
        "Debian 新维护者手册",
        "如何把上游软件打包成 Debian 软件包：目录结构、debian/ 目录中的文件、构建与检查。",
    ),
    Manual(
        "installation-guide-amd64",
        "usr/share/doc/installation-guide-amd64/zh_CN",
        "install-guide",
        "index.html",
        "Debian 安装手册（amd64）",
        "在 64 位 PC 上安装 Debian：系统需求、安装介质、安装程序的每一步与预置应答。",
    ),
)


def default_cache() -> Path:
    """Where downloaded .deb files are kept between builds."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tansuo" / "debs"


def build_demo_site(dest: Path, cache: Path | None = None, documents: bool = True) -> int:
    """Build the site in ``dest`` (unless it is already there) and return its page count.

    With ``documents``, the manuals' documents (a PDF of the Debian reference) are
    published beside their pages and linked from the front page, as sites publish
    theirs; tests that count a crawl's pages leave them out.

    Needs ``apt-get`` for packages not yet in ``cache`` and ``dpkg-deb`` to unpack them.
    Raises DemoSiteError with a suggested fix when either is missing or fails.
    """
    dest = Path(dest)
    built = _complete_site_pages(dest, documents)
    if built is not None:
        return built
    with build_lock(dest):
        return _complete_site_pages(dest, documents) or _build_demo_site(dest, cache, documents)


def _build_demo_site(dest: Path, cache: Path | None, documents: bool) -> int:
    if dest.exists() and not (dest / MARKER).exists() and any(dest.iterdir()):
        raise DemoSiteError(f"{dest} exists and is not a Tansuo demo site; remove it or choose another directory")
    cache = Path(cache) if cache is not None else default_cache()
    debs = fetch_packages([m.package for m in MANUALS], cache)

    dest.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{dest.name}.", dir=dest.parent))
    try:
        with tempfile.TemporaryDirectory(prefix="tansuo-debs-") as unpacked:
            root = Path(unpacked)
            for deb in debs.values():
                _unpack(deb, root)
            for manual in MANUALS:
                _copy_manual(manual, root, stage, documents)
                _copy_licence(manual, root, stage)
        (stage / "index.html").write_text(_index_html(debs, documents), encoding="utf-8")
        pages = sum(1 for _ in stage.rglob("*.html"))
        marker = {"layout": LAYOUT_VERSION, "pages": pages, "documents": documents,
                  "packages": {p: d.name for p, d in debs.items()}}  # fmt: skip
        (stage / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
        os.chmod(stage, 0o755)  # mkdtemp makes it private; the site is meant to be read
        _move_into_place(stage, dest, documents)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    result = _complete_site_pages(dest, documents)
    assert result is not None
    return result


def _complete_site_pages(dest: Path, documents: bool) -> int | None:
    """Page count of a finished site of the current layout, with or without its
    documents as asked, or None."""
    try:
        marker = json.loads((dest / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if marker.get("layout") != LAYOUT_VERSION or not (dest / "index.html").is_file():
        return None
    if marker.get("documents") != documents:
        return None
    return int(marker["pages"])


def _move_into_place(stage: Path, dest: Path, documents: bool) -> None:
    if dest.exists():
        if _complete_site_pages(dest, documents) is not None:
            return  # another process finished first; its site is as good as ours
        # Empty, or our own site of an older layout: safe to replace.
        shutil.rmtree(dest)
    try:
        stage.rename(dest)
    except OSError:
        if _complete_site_pages(dest, documents) is None:
            raise


@contextlib.contextmanager
def build_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock beside ``path`` while building it: two processes that
    build one site or download into one cache at once (two `tansuo demo` runs, or
    test workers) take turns, and the second finds the first's result."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.parent / f".{path.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def fetch_packages(packages: Sequence[str], cache: Path) -> dict[str, Path]:
    """The .deb of each package, downloading those not yet in ``cache``.

    ``apt-get download`` needs no root; only when it fails (stale package lists, the
    usual case on a fresh container) do we run ``apt-get update``, which does.
    """
    with build_lock(cache):
        return _fetch_packages(packages, cache)


def _fetch_packages(packages: Sequence[str], cache: Path) -> dict[str, Path]:
    cache.mkdir(parents=True, exist_ok=True)
    missing = [p for p in packages if _cached_deb(cache, p) is None]
    if missing:
        apt = shutil.which("apt-get")
        if apt is None:
            raise DemoSiteError(
                "the demo site is built from Debian packages, which needs apt-get (Debian or Ubuntu); "
                f"missing from {cache}: {', '.join(missing)}. "
                "On another system, crawl any site instead: tansuo crawl URL"
            )
        first = _run([apt, "download", *missing], cache)
        if first.returncode != 0:
            update = _run([apt, "update"], cache)
            if update.returncode != 0:
                raise DemoSiteError(
                    f"apt-get download failed ({_last_line(first)}) and apt-get update failed too "
                    f"({_last_line(update)}); run 'sudo apt-get update' and try again"
                )
            second = _run([apt, "download", *missing], cache)
            if second.returncode != 0:
                raise DemoSiteError(
                    f"apt-get download {' '.join(missing)} failed: {_last_line(second)}. "
                    "The packages are in Debian's and Ubuntu's main archive; check the apt sources"
                )
    debs: dict[str, Path] = {}
    for package in packages:
        deb = _cached_deb(cache, package)
        if deb is None:
            raise DemoSiteError(f"apt-get download reported success but no {package}_*.deb is in {cache}")
        debs[package] = deb
    return debs


def _cached_deb(cache: Path, package: str) -> Path | None:
    # Newest download wins when an update left two versions side by side.
    found = sorted(cache.glob(f"{package}_*.deb"), key=lambda p: p.stat().st_mtime)
    return found[-1] if found else None


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return subprocess.CompletedProcess(cmd, 1, "", str(exc))


def _last_line(proc: subprocess.CompletedProcess[str]) -> str:
    lines = [line for line in (proc.stderr or proc.stdout or "").splitlines() if line.strip()]
    return lines[-1].strip() if lines else f"exit status {proc.returncode}"


def _unpack(deb: Path, into: Path) -> None:
    dpkg_deb = shutil.which("dpkg-deb")
    if dpkg_deb is None:
        raise DemoSiteError("unpacking Debian packages needs dpkg-deb (Debian or Ubuntu)")
    proc = _run([dpkg_deb, "-x", str(deb), str(into)], into)
    if proc.returncode != 0:
        raise DemoSiteError(f"dpkg-deb -x {deb.name} failed: {_last_line(proc)}; delete it from the cache to refetch")


def _skip_compressed(directory: str, names: list[str]) -> set[str]:
    # The packages gzip their PDFs and text copies; a crawler has no use for them.
    return {n for n in names if n.endswith(".gz")}


def _copy_manual(manual: Manual, unpacked: Path, site: Path, documents: bool) -> None:
    source = unpacked / manual.source
    if not (source / manual.entry).is_file():
        raise DemoSiteError(f"{manual.package} has no {manual.source}/{manual.entry}; its layout changed")
    target = site / manual.folder
    if documents and manual.document and not (source / manual.document).is_file():
        raise DemoSiteError(f"{manual.package} has no {manual.source}/{manual.document}; its layout changed")
    if manual.only == "*":
        # symlinks=False copies what a link points to; links to files outside the
        # package (shared JavaScript) dangle here and are left out.
        shutil.copytree(source, target, symlinks=False, ignore=_skip_compressed, ignore_dangling_symlinks=True)
        return
    target.mkdir(parents=True)
    for path in sorted(source.glob(manual.only)):
        if path.is_file():
            shutil.copyfile(path, target / path.name)
    if documents and manual.document:
        shutil.copyfile(source / manual.document, target / manual.document)


def _copy_licence(manual: Manual, unpacked: Path, site: Path) -> None:
    """Keep each package's copyright file beside its manual: redistributing the
    manuals, even on loopback, comes with their licences."""
    copyright_file = unpacked / "usr/share/doc" / manual.package / "copyright"
    if copyright_file.is_file():
        licences = site / "licenses"
        licences.mkdir(exist_ok=True)
        shutil.copyfile(copyright_file, licences / f"{manual.package}.txt")


def _index_html(debs: dict[str, Path], documents: bool) -> str:
    items = []
    for m in MANUALS:
        version = debs[m.package].name.split("_")[1] if "_" in debs[m.package].name else ""
        licence = f'<a href="licenses/{html.escape(m.package)}.txt">许可证</a>'
        if documents and m.document:
            licence += f' · <a href="{html.escape(m.folder)}/{html.escape(m.document)}">PDF 版</a>'
        items.append(
            f'<li><h2><a href="{html.escape(m.folder)}/{html.escape(m.entry)}">{html.escape(m.title)}</a></h2>'
            f"<p>{html.escape(m.blurb)}</p>"
            f'<p class="pkg">软件包 {html.escape(m.package)} {html.escape(version)} · {licence}</p></li>'
        )
    return (
        '<!DOCTYPE html>\n<html lang="zh-CN">\n<head>\n<meta charset="utf-8">\n'
        "<title>Debian 中文文档 · 探索演示站点</title>\n"
        '<meta name="description" content="Debian 项目的五部简体中文手册，供探索搜索引擎演示抓取与检索。">\n'
        "<style>body{max-width:46em;margin:2em auto;padding:0 1em;font-family:sans-serif;line-height:1.6}"
        "ul{list-style:none;padding:0}h2{margin-bottom:.2em;font-size:1.2em}.pkg{color:#666;font-size:.9em}</style>\n"
        "</head>\n<body>\n<h1>Debian 中文文档</h1>\n"
        "<p>这是<strong>探索</strong>（Tansuo）搜索引擎的演示站点。下面五部手册由 Debian 项目的作者和译者编写，"
        "取自 Debian 软件包，内容原样保留；探索在本机抓取这些页面、用 jieba 分词建立索引、按链接计算 PageRank，"
        "然后就可以用中文搜索它们了。试试搜索“软件包管理”“安装程序”或“防火墙”"
        + ("；《Debian 参考手册》的 PDF 版也被抓取并索引，可以用“filetype:pdf”只搜索文档" if documents else "")
        + "。</p>\n"
        "<ul>\n" + "\n".join(items) + "\n</ul>\n"
        "<p>各手册的版权归其作者所有，按各自的自由软件许可证发布，详见每部手册旁的许可证链接。</p>\n"
        "</body>\n</html>\n"
    )
