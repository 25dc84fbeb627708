"""The embedded page store's packs: what a crash, a full disk, a second process and an
older Tansuo's files leave behind. The PageStore contract itself is in
tests/contract/test_page_store.py."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import threading
from pathlib import Path

import pytest

from services.common.adapters.packs.pack_files import SUFFIX, compact, encode
from services.common.adapters.packs.page_store import PackPageStore
from services.common.domain.documents import StoredPage
from services.common.domain.messages import url_fingerprint

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


@pytest.mark.parametrize("large_bytes", [1 << 20, 1000], ids=["pages", "large bodies"])
def test_a_full_disk_loses_the_page_that_failed_and_nothing_before_or_after_it(
    tmp_path: Path, large_bytes: int
) -> None:
    # RLIMIT_FSIZE makes the kernel refuse a write past 20,000 bytes, as a full disk would.
    script = textwrap.dedent(f"""
        import resource, signal, sys
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from tests.unit.test_page_store_packs import key, page
        from services.common.adapters.packs.page_store import PackPageStore
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (20_000, resource.RLIM_INFINITY))
        store = PackPageStore(Path({str(tmp_path)!r}), large_bytes={large_bytes})
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


def test_compaction_reclaims_pages_fetched_again_and_keeps_the_latest_of_each(tmp_path: Path) -> None:
    for round_ in range(3):  # three crawls, each fetching pages 0-29 again, changed
        store = PackPageStore(tmp_path)
        for n in range(30):
            store.put(key(n), page(n, f"round {round_} ".encode() * 100))
        store.close()
    extra = PackPageStore(tmp_path)
    extra.put(key(99), page(99))  # a fourth pack, still being written
    before = sum(p.stat().st_size for p in packs(tmp_path))
    reader = PackPageStore(tmp_path)
    assert reader.get(key(5)) == page(5, b"round 2 " * 100)

    freed = compact(tmp_path, writing=extra._pack)

    after = sum(p.stat().st_size for p in packs(tmp_path))
    assert freed > 0 and after == before - freed
    assert len(packs(tmp_path)) == 2  # the last crawl's pack (all live) and the one being written
    for store in (reader, PackPageStore(tmp_path)):  # one that read the old packs, one new
        assert all(store.get(key(n)) == page(n, b"round 2 " * 100) for n in range(30))
        assert store.get(key(99)) == page(99)


def test_a_pack_half_dead_is_rewritten_with_its_live_pages_only(tmp_path: Path) -> None:
    first = PackPageStore(tmp_path)
    for n in range(10):
        first.put(key(n), page(n, b"a" * 500))
    first.close()
    second = PackPageStore(tmp_path)
    for n in range(6):  # 6 of the first pack's 10 pages fetched again
        second.put(key(n), page(n, b"b" * 500))
    second.close()
    old_first = packs(tmp_path)[0]

    compact(tmp_path)

    names = [p.name for p in packs(tmp_path)]
    assert old_first.name not in names and names[0] == old_first.name.replace(".pack", "+.pack")
    store = PackPageStore(tmp_path)
    assert [store.get(key(n)) for n in range(10)] == [page(n, b"b" * 500) for n in range(6)] + [
        page(n, b"a" * 500) for n in range(6, 10)
    ]


def test_a_compaction_stopped_by_a_crash_loses_nothing(tmp_path: Path) -> None:
    for body in (b"old", b"new"):
        store = PackPageStore(tmp_path)
        for n in range(4):
            store.put(key(n), page(n, body * 50))
        store.put(key(10 if body == b"old" else 11), page(10, body))
        store.close()
    old = packs(tmp_path)[0]
    (tmp_path / old.name.replace(".pack", "+.compacting")).write_bytes(b"TSP1 half")  # died while copying
    copy = old.read_bytes()

    compact(tmp_path)  # clears the half copy and compacts
    assert not list(tmp_path.glob("*.compacting"))
    # Died after the rename, before the delete: the old pack is back beside its copy.
    old.write_bytes(copy)
    store = PackPageStore(tmp_path)
    assert [store.get(key(n)) for n in range(4)] == [page(n, b"new" * 50) for n in range(4)]
    assert store.get(key(10)) == page(10, b"old")
    compact(tmp_path)
    assert PackPageStore(tmp_path).get(key(10)) == page(10, b"old")


def test_a_writer_starts_a_compaction_once_the_packs_are_large(tmp_path: Path) -> None:
    for round_ in range(2):
        store = PackPageStore(tmp_path)
        for n in range(20):
            store.put(key(n), page(n, bytes([round_]) * 1000))
        store.close()
    assert PackPageStore(tmp_path, compact_from=10**9).compaction is None
    writer = PackPageStore(tmp_path, compact_from=10_000)
    writer.put(key(50), page(50))
    assert writer.compaction is not None
    writer.compaction.join(timeout=30)
    assert len(packs(tmp_path)) == 2  # the second round's pack and the writer's
    assert all(writer.get(key(n)) == page(n, bytes([1]) * 1000) for n in range(20))


def test_packs_another_machine_may_still_write_are_left_alone(tmp_path: Path) -> None:
    # Two containers sharing a volume can both be pid 7: their packs carry the host name.
    # (4194000: no process here has that pid, so only the host name keeps them.)
    for name in ("00000000000000000001-4194000-elsewhere.pack", "00000000000000000002-4194000-elsewhere.pack"):
        store = PackPageStore(tmp_path)
        store.put(key(1), page(1, name.encode()))
        store.close()
        packs(tmp_path)[-1].rename(tmp_path / name)
    assert compact(tmp_path) == 0
    assert len(packs(tmp_path)) == 2


class HeldStore(PackPageStore):
    """A store whose large bodies' writes wait until the test lets them go on: the
    test can then do what a crawl does meanwhile (store its pages)."""

    def __init__(self, root: Path) -> None:
        super().__init__(root, large_bytes=10_000)
        self.writing = threading.Event()
        self.go_on = threading.Event()

    def _write_body(self, fd: int, parts: list[bytes], offset: int) -> None:
        self.writing.set()
        assert self.go_on.wait(30)
        super()._write_body(fd, parts, offset)


def test_pages_are_stored_while_a_large_body_is_being_written(tmp_path: Path) -> None:
    store = HeldStore(tmp_path)
    store.put(key(1), page(1))
    large = page(2, b"%PDF-" + b"d" * 50_000)
    writer = threading.Thread(target=store.put, args=(key(2), large))
    writer.start()
    try:
        assert store.writing.wait(30), "the large body was written under the store's lock"

        def store_pages() -> None:
            for n in (3, 4):
                store.put(key(n), page(n))

        pages_meanwhile = threading.Thread(target=store_pages)
        pages_meanwhile.start()
        pages_meanwhile.join(30)
        assert not pages_meanwhile.is_alive(), "a page's store waited for the large body"
        store.put(key(1), page(1, b"fetched again"))
    finally:
        store.go_on.set()
        writer.join(30)
    reader = PackPageStore(tmp_path)
    assert [reader.get(key(n)) for n in (1, 2, 3, 4)] == [page(1, b"fetched again"), large, page(3), page(4)]
    (pack,) = packs(tmp_path)  # laid out as any record: a reader of an older Tansuo reads it
    meta = json.dumps(large.meta(), ensure_ascii=False).encode()
    assert encode(key(2), meta, large.body) in pack.read_bytes()


def test_a_large_record_stored_again_while_its_first_copy_is_written_keeps_the_later(tmp_path: Path) -> None:
    store = HeldStore(tmp_path)
    writer = threading.Thread(target=store.put, args=(key(1), page(1, b"old" * 10_000)))
    writer.start()
    try:
        assert store.writing.wait(30)
        store.put(key(1), page(1, b"new"))
    finally:
        store.go_on.set()
        writer.join(30)
    assert PackPageStore(tmp_path).get(key(1)) == page(1, b"new")


def test_a_crash_while_a_large_body_is_written_loses_it_and_nothing_stored_meanwhile(tmp_path: Path) -> None:
    script = textwrap.dedent(f"""
        import os, sys, threading
        sys.path.insert(0, {str(REPO)!r})
        from pathlib import Path
        from tests.unit.test_page_store_packs import HeldStore, key, page
        class Crashing(HeldStore):
            def _write_body(self, fd, parts, offset):
                self.writing.set()
                self.go_on.wait(30)
                os.pwrite(fd, parts[0], offset)  # the metadata, then the process dies
                os._exit(3)
        store = Crashing(Path({str(tmp_path)!r}))
        store.put(key(1), page(1))
        threading.Thread(target=store.put, args=(key(2), page(2, b"d" * 50_000))).start()
        store.writing.wait(10)
        store.put(key(3), page(3))
        store.go_on.set()
        threading.Event().wait(10)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    store = PackPageStore(tmp_path)
    assert [store.get(key(n)) for n in (1, 2, 3)] == [page(1), None, page(3)]
    store.put(key(4), page(4))
    assert PackPageStore(tmp_path).get(key(4)) == page(4)
