"""The embedded page store's packs: what a crash, a full disk, a second process and an
older Tansuo's files leave behind. The PageStore contract itself is in
tests/contract/test_page_store.py."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from services.common.adapters.page_store_packs import SUFFIX, PackPageStore
from services.common.model import StoredPage, url_fingerprint

REPO = Path(__file__).resolve().parents[2]


def page(n: int, body: bytes | None = None) -> StoredPage:
    return StoredPage(
        url=f"https://例子.cn/第{n}页", status=200, headers={"content-type": "text/html"},
        fetched_at=1_766_000_000.0 + n, body=body if body is not None else f"<p>第{n}页</p>".encode(),
        content_hash=f"{n:040x}",
    )  # fmt: skip


def key(n: int) -> str:
    return url_fingerprint(page(n).url)


def packs(root: Path) -> list[Path]:
    return sorted(root.glob(f"*{SUFFIX}"))


def test_pages_go_to_one_pack_not_a_file_each(tmp_path: Path) -> None:
    store = PackPageStore(tmp_path)
    for n in range(50):
        store.put(key(n), page(n))
    assert [p.name for p in tmp_path.iterdir()] == [packs(tmp_path)[0].name]
    assert all(store.get(key(n)) == page(n) for n in range(50))


def test_a_record_cut_by_a_crash_is_not_read_and_the_next_process_writes_a_new_pack(tmp_path: Path) -> None:
    first = PackPageStore(tmp_path)
    first.put(key(1), page(1))
    first.put(key(2), page(2))
    first.put(key(2), page(2, b"x" * 10_000))  # the crash cuts this one
    first.close()
    (pack,) = packs(tmp_path)
    pack.write_bytes(pack.read_bytes()[:-5_000])

    again = PackPageStore(tmp_path)
    assert again.get(key(2)) == page(2)  # the whole record before it
    again.put(key(3), page(3))
    assert len(packs(tmp_path)) == 2 and pack.stat().st_size < 11_000  # the old pack is left as it was
    assert [again.get(key(n)) for n in (1, 2, 3)] == [page(1), page(2), page(3)]


def test_a_damaged_record_is_never_returned(tmp_path: Path) -> None:
    store = PackPageStore(tmp_path)
    store.put(key(1), page(1, b"A" * 1000))
    (pack,) = packs(tmp_path)
    raw = bytearray(pack.read_bytes())
    raw[-10] ^= 0xFF
    pack.write_bytes(bytes(raw))
    assert PackPageStore(tmp_path).get(key(1)) is None


def test_a_reader_sees_what_was_appended_after_its_first_read(tmp_path: Path) -> None:
    writer, reader = PackPageStore(tmp_path), PackPageStore(tmp_path)
    writer.put(key(1), page(1))
    assert reader.get(key(2)) is None
    writer.put(key(2), page(2))
    writer.put(key(1), page(1, b"new"))
    assert reader.get(key(2)) == page(2)
    assert reader.get(key(1)) == page(1, b"new")


def test_packs_roll_over_and_every_page_stays_readable(tmp_path: Path) -> None:
    store = PackPageStore(tmp_path, roll_bytes=2_000)
    for n in range(40):
        store.put(key(n), page(n, bytes([n]) * 300))
    assert len(packs(tmp_path)) >= 5
    assert all(p.stat().st_size <= 2_000 for p in packs(tmp_path))
    reader = PackPageStore(tmp_path)
    assert all(reader.get(key(n)) == page(n, bytes([n]) * 300) for n in range(40))


def test_a_page_an_older_tansuo_stored_as_a_file_is_still_read(tmp_path: Path) -> None:
    old = page(7)
    path = tmp_path / key(7)[:2] / key(7)
    path.parent.mkdir()
    path.write_bytes(json.dumps(old.meta(), ensure_ascii=False).encode() + b"\n" + old.body)
    store = PackPageStore(tmp_path)
    assert store.get(key(7)) == old
    store.put(key(7), page(7, b"fetched again"))
    assert store.get(key(7)) == page(7, b"fetched again")


@pytest.mark.parametrize("bad", ["", "a b", "../../etc/passwd", "键", "a\nTSP1"])
def test_keys_that_are_not_fingerprints_are_refused(tmp_path: Path, bad: str) -> None:
    store = PackPageStore(tmp_path)
    with pytest.raises(ValueError):
        store.put(bad, page(1))
    assert store.get(bad) is None
    assert packs(tmp_path) == []


def test_a_full_disk_loses_the_page_that_failed_and_nothing_before_or_after_it(tmp_path: Path) -> None:
    # RLIMIT_FSIZE makes the kernel refuse a write past 20,000 bytes, as a full disk would.
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from tests.unit.test_page_store_packs import key, page
        from services.common.adapters.page_store_packs import PackPageStore
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, resource.RLIM_INFINITY))
        store = PackPageStore(Path({str(tmp_path)!r}))
        store.put(key(1), page(1, b"a" * 15_000))
        try:
            store.put(key(2), page(2, b"b" * 15_000))
        except OSError:
            print("refused")
        store.put(key(3), page(3, b"c" * 100))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["refused"]
    first, second = packs(tmp_path)
    assert first.stat().st_size < 15_300  # cut back to its one whole record
    store = PackPageStore(tmp_path)
    assert store.get(key(1)) == page(1, b"a" * 15_000)
    assert store.get(key(2)) is None
    assert store.get(key(3)) == page(3, b"c" * 100)
