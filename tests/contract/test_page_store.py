"""The PageStore contract, run against every adapter."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from services.common.adapters.packs.page_store import PackPageStore
from services.common.adapters.s3.page_store import (
    S3PageStore,
    StoreUnavailable,
    parse_s3_url,
)
from services.common.config import Settings
from services.common.domain.documents import StoredPage
from services.common.domain.messages import url_fingerprint
from services.common.ports import PageStore
from tests.servers.net import free_port

URL = "https://例子.中国/新闻/今日要闻?关键词=搜索引擎&page=2#第二节"


@pytest.fixture(params=["packs", pytest.param("s3", marks=pytest.mark.integration)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> PageStore:
    if request.param == "packs":
        return PackPageStore(tmp_path / "pages")
    return S3PageStore.from_url(request.getfixturevalue("s3_url"), Settings())


def page(url: str = URL, body: bytes = b"<html>ok</html>", **fields: object) -> StoredPage:
    values: dict = dict(
        url=url, status=200, headers={"content-type": "text/html; charset=utf-8", "etag": '"abc"'},
        fetched_at=1_766_000_000.123456, body=body, content_hash="0f" * 20,
    )  # fmt: skip
    values.update(fields)
    return StoredPage(**values)


def test_a_stored_page_comes_back_unchanged(store: PageStore) -> None:
    original = page()
    key = url_fingerprint(original.url)
    store.put(key, original)
    assert store.get(key) == original


def test_put_twice_keeps_the_latest_copy(store: PageStore) -> None:
    key = url_fingerprint(URL)
    store.put(key, page(body="旧版本".encode(), status=200, content_hash="old"))
    store.put(key, page(body="新版本".encode(), status=304, content_hash="new", fetched_at=1_766_000_999.5))
    got = store.get(key)
    assert got is not None
    assert (got.body.decode(), got.status, got.content_hash) == ("新版本", 304, "new")
    assert got.fetched_at == 1_766_000_999.5


def test_a_missing_key_gives_none(store: PageStore) -> None:
    assert store.get(url_fingerprint("https://example.cn/never-fetched")) is None


def test_chinese_urls_and_binary_bodies_survive_intact(store: PageStore) -> None:
    body = bytes(range(256)) + "中文页面，GB18030 编码".encode("gb18030") + b"\r\n\x00"
    original = page(
        url="https://例子.cn/路径/%E4%B8%AD?q=100%25 真&x=%zz",  # literal escapes, a space, a stray %
        body=body,
        headers={"content-type": "text/html; charset=gb18030", "x-note": "中文 header\tvalue  two  spaces"},
    )
    store.put("ab12", original)
    assert store.get("ab12") == original


def test_headers_too_big_for_object_metadata_round_trip_and_can_shrink_again(store: PageStore) -> None:
    big = {f"set-cookie-{i}": f"session{i}=" + "长" * 100 for i in range(20)}  # ~7 KB, over S3's 2 KB
    key = url_fingerprint(URL)
    store.put(key, page(headers=big, body=b"big headers"))
    assert store.get(key) == page(headers=big, body=b"big headers")
    store.put(key, page(headers={"content-type": "text/plain"}, body=b"small again"))
    assert store.get(key) == page(headers={"content-type": "text/plain"}, body=b"small again")
    store.put(key, page(headers={**big, "date": "later"}, body=b"big again"))
    assert store.get(key) == page(headers={**big, "date": "later"}, body=b"big again")


def test_an_empty_body_is_a_page_too(store: PageStore) -> None:
    original = page(body=b"", status=204, headers={})
    store.put("cd34", original)
    assert store.get("cd34") == original


def test_ping_succeeds_on_a_working_store(store: PageStore) -> None:
    store.ping()


# --- S3 only


def test_s3_urls_name_endpoint_bucket_prefix_tls_and_credentials() -> None:
    t = parse_s3_url("s3://AK:se%2Fcret@minio:9000/pages")
    assert (t.endpoint, t.bucket, t.prefix, t.secure, t.access_key, t.secret_key) == (
        "minio:9000", "pages", "", False, "AK", "se/cret",
    )  # fmt: skip
    t = parse_s3_url("s3+https://AK:SK@s3.example.com/pages/tansuo/prod/")
    assert (t.endpoint, t.bucket, t.prefix, t.secure) == ("s3.example.com", "pages", "tansuo/prod/", True)
    t = parse_s3_url("s3://minio:9000/pages?secure=1&region=cn-north-1")
    assert (t.secure, t.region, t.access_key) == (True, "cn-north-1", None)
    for bad in ("http://minio:9000/pages", "s3://minio:9000/", "s3://minio:9000/pages?tls=1"):
        with pytest.raises(ValueError):
            parse_s3_url(bad)


def test_s3_calls_fail_fast_and_clearly_when_nothing_listens() -> None:
    store = S3PageStore(parse_s3_url(f"s3://k:s@127.0.0.1:{free_port()}/pages"), timeout_s=1.0)
    started = time.monotonic()
    with pytest.raises(StoreUnavailable, match="127.0.0.1"):
        store.ping()
    with pytest.raises(StoreUnavailable):
        store.put("ab", page())
    with pytest.raises(StoreUnavailable):
        store.get("ab")
    assert time.monotonic() - started < 10


@pytest.mark.integration
def test_s3_pages_are_raw_objects_with_their_metadata(s3_url: str) -> None:
    """What other tools see in the bucket: the body as it was fetched, the rest as metadata."""
    from minio import Minio

    store = S3PageStore.from_url(s3_url, Settings())
    key = url_fingerprint(URL)
    store.put(key, page(body=b"<html>raw</html>"))
    t = parse_s3_url(s3_url)
    client = Minio(t.endpoint, access_key=t.access_key, secret_key=t.secret_key, secure=False)
    response = client.get_object(t.bucket, f"pages/{key[:2]}/{key}")
    try:
        assert response.read() == b"<html>raw</html>"
        assert response.headers["Content-Type"] == "text/html; charset=utf-8"
        assert response.headers["x-amz-meta-status"] == "200"
    finally:
        response.close()
        response.release_conn()


@pytest.mark.integration
def test_s3_oversized_metadata_goes_to_one_sidecar_and_old_ones_are_removed(
    s3_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from minio import Minio

    from services.common.adapters.s3 import page_store as page_store_s3

    monkeypatch.setattr(page_store_s3, "_SIDECAR_GRACE_S", 0.0)  # no concurrent writers here
    store = S3PageStore.from_url(s3_url, Settings())
    t = parse_s3_url(s3_url)
    client = Minio(t.endpoint, access_key=t.access_key, secret_key=t.secret_key, secure=False)
    key = url_fingerprint(URL)
    big = {f"x-header-{i}": "v" * 200 for i in range(12)}
    for fetch in range(3):
        store.put(key, page(headers={**big, "date": f"fetch {fetch}"}))
    sidecars = [o.object_name for o in client.list_objects(t.bucket, prefix=f"page-meta/{key[:2]}/{key}/")]
    stat = client.stat_object(t.bucket, f"pages/{key[:2]}/{key}")
    assert sidecars == [f"page-meta/{key[:2]}/{key}/{stat.metadata['x-amz-meta-meta-ref']}.json"]
    assert store.get(key) == page(headers={**big, "date": "fetch 2"})
