"""A tantivy reader advises the kernel of random reads on its mapped index files; a
writer does not (its merges read front to back). The kernel's own record of the advice
is the "rr" flag of each mapping in /proc/self/smaps."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.common.adapters.tantivy.mmap_advice import RandomAccessAdvice, _mappings
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from tests.page_events import index_doc

pytestmark = pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux only")


def _flags_of_mappings_under(directory: Path) -> list[set[str]]:
    """The VmFlags of every mapping of a file under ``directory``."""
    prefix = str(directory.resolve()) + "/"
    flags, inside = [], False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(maxsplit=5)
        if len(head) >= 5 and "-" in head[0] and ":" in head[3]:  # a mapping's first line
            inside = len(head) == 6 and head[5].startswith(prefix)
        elif inside and line.startswith("VmFlags:"):
            flags.append(set(line.split()[1:]))
    return flags


def _index_with_pages(path: Path, n: int = 30) -> None:
    writer = TantivySearchIndex(path, Settings(data_dir=path.parent))
    writer.upsert([index_doc(f"https://example.cn/{i}", title=f"第{i}页 标题", body="正文 " * 50) for i in range(n)])
    writer.commit()
    writer.close()


def test_a_reader_maps_the_index_for_random_reads(tmp_path: Path) -> None:
    _index_with_pages(tmp_path / "index")
    reader = TantivySearchIndex(tmp_path / "index", Settings(data_dir=tmp_path), read_only=True)
    assert reader.count() == 30
    flags = _flags_of_mappings_under(tmp_path / "index")
    assert flags, "tantivy mapped no index file"
    assert all("rr" in f for f in flags)


def test_the_advice_can_be_turned_off(tmp_path: Path) -> None:
    _index_with_pages(tmp_path / "index")
    cfg = Settings(data_dir=tmp_path, index_random_access=False)
    reader = TantivySearchIndex(tmp_path / "index", cfg, read_only=True)
    assert reader.count() == 30
    flags = _flags_of_mappings_under(tmp_path / "index")
    assert flags and not any("rr" in f for f in flags)


def test_segments_mapped_by_a_later_reload_are_advised_too(tmp_path: Path) -> None:
    _index_with_pages(tmp_path / "index")
    reader = TantivySearchIndex(tmp_path / "index", Settings(data_dir=tmp_path), read_only=True)
    writer = TantivySearchIndex(tmp_path / "index", Settings(data_dir=tmp_path))
    writer.upsert([index_doc("https://example.cn/new", title="新页", body="新的正文")])
    writer.commit()
    assert reader.count() == 31  # the reader notices the commit and maps the new segment
    reader_flags = [f for f in _flags_of_mappings_under(tmp_path / "index") if "rr" in f]
    assert len(reader_flags) >= 2
    writer.close()


def test_only_mappings_of_files_under_the_directory_are_chosen() -> None:
    lines = [
        "7f00-7f10 r--s 00000000 fd:00 12 /data/index/a.idx",
        "7f10-7f20 r--s 00000000 fd:00 13 /data/index-old/b.idx",
        "7f20-7f30 r-xp 00000000 fd:00 14 /usr/lib/libc.so.6",
        "7f30-7f40 rw-p 00000000 00:00 0",
    ]
    assert _mappings(lines, "/data/index/") == [(0x7F00, 0x7F10, "/data/index/a.idx")]


def test_each_mapping_is_advised_once(tmp_path: Path) -> None:
    _index_with_pages(tmp_path / "index")
    reader = TantivySearchIndex(tmp_path / "index", Settings(data_dir=tmp_path), read_only=True)
    assert reader.count() == 30
    advice = RandomAccessAdvice(tmp_path / "index")
    assert advice.apply() > 0
    assert advice.apply() == 0
