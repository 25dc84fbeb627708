"""The demo site: Debian's Chinese manuals, fetched with apt, served on loopback.

Needs apt-get (and network access to a Debian mirror the first time); the .deb files
are cached in the user's cache, so later runs only unpack.
"""

from __future__ import annotations

import re
import shutil
import time
import urllib.request
from pathlib import Path

import pytest

from services.cli.demo_site import (
    MANUALS,
    DemoSiteError,
    build_demo_site,
    default_cache,
    fetch_packages,
)
from services.cli.static_site_server import SiteServer

needs_apt = pytest.mark.skipif(
    shutil.which("apt-get") is None or shutil.which("dpkg-deb") is None,
    reason="building the demo site needs apt-get and dpkg-deb (Debian or Ubuntu)",
)


@pytest.fixture(scope="module")
def demo_site(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, int]:
    dest = tmp_path_factory.mktemp("demo") / "site"
    return dest, build_demo_site(dest)


@pytest.mark.integration
@needs_apt
def test_the_demo_site_holds_the_five_manuals(demo_site: tuple[Path, int]) -> None:
    dest, pages = demo_site
    assert 200 <= pages <= 400
    assert pages == sum(1 for _ in dest.rglob("*.html"))
    assert not list(dest.rglob("*.gz"))
    for manual in MANUALS:
        assert (dest / manual.folder / manual.entry).is_file()
    index = (dest / "index.html").read_text(encoding="utf-8")
    assert "Debian 中文文档" in index and "探索" in index
    handbook = (dest / "handbook" / "index.html").read_text(encoding="utf-8")
    assert "管理员手册" in handbook
    # The reference's PDF is published beside its pages and linked from the front page.
    assert (dest / "debian-reference" / "debian-reference.zh-cn.pdf").read_bytes().startswith(b"%PDF-")
    assert 'href="debian-reference/debian-reference.zh-cn.pdf"' in index


@pytest.mark.integration
@needs_apt
def test_building_again_returns_at_once(demo_site: tuple[Path, int]) -> None:
    dest, pages = demo_site
    started = time.monotonic()
    assert build_demo_site(dest) == pages
    assert time.monotonic() - started < 1.0


@pytest.mark.integration
@needs_apt
def test_every_link_on_the_demo_home_page_is_served(demo_site: tuple[Path, int]) -> None:
    dest, _ = demo_site
    with SiteServer(dest) as server:
        home = urllib.request.urlopen(server.url, timeout=5).read().decode("utf-8")
        links = re.findall(r'href="([^"]+)"', home)
        assert len(links) >= 2 * len(MANUALS)  # each manual and its licence
        for link in links:
            with urllib.request.urlopen(server.url + link, timeout=5) as response:
                assert response.status == 200


def test_without_apt_and_without_a_cache_the_error_says_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(DemoSiteError, match="apt-get"):
        build_demo_site(tmp_path / "site", cache=tmp_path / "empty-cache")
    assert not (tmp_path / "site").exists()


def test_a_directory_that_is_not_a_demo_site_is_left_alone(tmp_path: Path) -> None:
    dest = tmp_path / "site"
    dest.mkdir()
    (dest / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(DemoSiteError, match="not a Tansuo demo site"):
        build_demo_site(dest, cache=tmp_path / "cache")
    assert (dest / "notes.txt").read_text(encoding="utf-8") == "mine"


def test_the_default_cache_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache() == tmp_path / "tansuo" / "debs"


def fake_apt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, download_works_after_update: bool) -> Path:
    """An apt-get whose `download` fails until `update` ran, as on a fresh container."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.log"
    script = bin_dir / "apt-get"
    then = "exit 0" if download_works_after_update else "false"
    script.write_text(
        f"""#!/bin/sh
echo "$*" >> "{calls}"
if [ "$1" = update ]; then touch "{tmp_path}/updated"; exit 0; fi
if [ "$1" = download ] && [ -e "{tmp_path}/updated" ]; then
    shift; for p in "$@"; do touch "${{p}}_1.0_all.deb"; done; {then}
fi
echo "E: Unable to locate package $2" >&2; exit 100
""",
        encoding="utf-8",
    )
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    return calls


def test_a_failed_download_runs_apt_update_and_retries(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = fake_apt(tmp_path, monkeypatch, download_works_after_update=True)
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "pkg-a_0.9_all.deb").touch()  # cached packages are not downloaded again
    debs = fetch_packages(["pkg-a", "pkg-b", "pkg-c"], cache)
    assert debs == {
        "pkg-a": cache / "pkg-a_0.9_all.deb",
        "pkg-b": cache / "pkg-b_1.0_all.deb",
        "pkg-c": cache / "pkg-c_1.0_all.deb",
    }
    assert calls.read_text().splitlines() == ["download pkg-b pkg-c", "update", "download pkg-b pkg-c"]


def test_a_download_that_keeps_failing_names_the_packages(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_apt(tmp_path, monkeypatch, download_works_after_update=False)
    with pytest.raises(DemoSiteError, match="apt-get download pkg-b failed: E: Unable to locate package"):
        fetch_packages(["pkg-b"], tmp_path / "cache")
