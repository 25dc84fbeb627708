"""The MinHash signature is stored data (its LSH bands are index terms): a change that
makes it faster must leave every value as it was."""

from __future__ import annotations

import zlib

from services.common import minhash


def _reference(tokens: list[str]) -> tuple[int, ...]:
    """The signature's definition in plain integers: distinct word-pair hashes, then
    the minimum of (a*x + b) mod p per hash function."""
    ids = [zlib.crc32(t.encode("utf-8")) for t in tokens]
    pairs = {(x * 0x9E3779B1 + y) & 0xFFFFFFFF for x, y in zip(ids, ids[1:])}
    return tuple(min((int(a) * x + int(b)) % minhash._PRIME for x in pairs) for a, b in zip(minhash._A, minhash._B))


def test_the_signature_is_its_plain_integer_definition() -> None:
    tokens = ("安装 软件 包 的 时候 apt-get 会 自动 处理 依赖 关系 ，" * 3 + " 然后 配置 网络 和 内核 驱动").split() * 3
    assert len(tokens) >= minhash.MIN_TOKENS
    assert minhash.signature(tokens) == _reference(tokens)


def test_a_short_page_has_no_signature() -> None:
    assert minhash.signature(["词"] * (minhash.MIN_TOKENS - 1)) == ()
