"""The MinHash signature is stored data (its LSH bands are index terms): it must come
out the same in every process and release, and estimate the Jaccard similarity of
the pages' word pairs."""

from __future__ import annotations

import subprocess
import sys
from itertools import pairwise

import rensa
from hypothesis import given
from hypothesis import strategies as st

from services.common.domain import minhash
from services.common.runtime.native_code import native

TOKENS = ("安装 软件 包 的 时候 apt-get 会 自动 处理 依赖 关系 ，" * 3 + " 然后 配置 网络 和 内核 驱动").split() * 3
# Computed once with rensa 0.5.0. A rensa release that hashes differently fails here,
# before it makes new signatures that no stored one matches.
PINNED = (2899955311, 3317502769, 3280104714, 3238367441, 2947759640, 2411237015, 3230314363, 790327049)


def _pairs(tokens: list[str]) -> set[tuple[str, str]]:
    return set(pairwise(tokens))


def _jaccard(a: list[str], b: list[str]) -> float:
    pa, pb = _pairs(a), _pairs(b)
    return len(pa & pb) / len(pa | pb)


def test_the_signature_keeps_its_pinned_values() -> None:
    assert len(TOKENS) >= minhash.MIN_TOKENS
    sig = minhash.signature(TOKENS)
    assert len(sig) == minhash.HASHES
    assert sig[:8] == PINNED


def test_another_process_with_another_hash_seed_computes_the_same_signature() -> None:
    code = f"from services.common.domain import minhash; print(minhash.signature({TOKENS!r}))"
    env_seeds = ("1", "2")
    outs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": seed, "PATH": "/usr/bin:/bin"}).stdout.strip()
        for seed in env_seeds
    }  # fmt: skip
    assert outs == {str(minhash.signature(TOKENS))}


def test_the_signature_depends_on_the_word_pairs_not_their_order_or_repeats() -> None:
    words = [f"词{n}" for n in range(80)]
    chunks = [words[i : i + 20] for i in range(0, 80, 20)]
    shuffled = chunks[2] + chunks[0] + chunks[3] + chunks[1]  # the same pairs but three
    assert minhash.similarity(minhash.signature(words), minhash.signature(words + words[:10])) > 0.85
    assert minhash.similarity(minhash.signature(words), minhash.signature(shuffled)) >= 0.8


def test_the_estimate_is_close_to_the_jaccard_similarity_of_word_pairs() -> None:
    words = [f"词{n}" for n in range(400)]
    for kept in (400, 320, 200, 80):
        other = words[:kept] + [f"别的{n}" for n in range(400 - kept)]
        estimate = minhash.similarity(minhash.signature(words), minhash.signature(other))
        assert abs(estimate - _jaccard(words, other)) < 0.15, (kept, estimate, _jaccard(words, other))


def test_unrelated_pages_share_almost_nothing() -> None:
    a = minhash.signature([f"甲{n}" for n in range(300)])
    b = minhash.signature([f"乙{n}" for n in range(300)])
    assert minhash.similarity(a, b) < 0.1


def test_a_short_page_has_no_signature() -> None:
    assert minhash.signature(["词"] * (minhash.MIN_TOKENS - 1)) == ()


def test_bands_and_packing_round_trip() -> None:
    sig = minhash.signature(TOKENS)
    assert minhash.unpack(minhash.pack(sig)) == sig
    assert len(minhash.bands(sig)) == minhash.BANDS
    assert minhash.bands(()) == []


def test_band_terms_keep_their_stored_form_and_a_caller_cannot_spoil_them() -> None:
    # Band terms are index terms: a page's must match the ones stored for its copies.
    sig = minhash.signature(TOKENS)
    first = minhash.bands(sig)
    assert first[:2] == ["0:4b0b813c09d7", "1:8f3dff89e7b0"]
    first.clear()  # the answer is remembered; the caller's list must be its own
    assert minhash.bands(list(sig)) == minhash.bands(sig) and len(minhash.bands(sig)) == minhash.BANDS


def _signature_from_strings(words: list[str]) -> tuple[int, ...]:
    """The path taken where the C module was not built: rensa hashing the pair strings."""
    sketch = rensa.RMinHash(minhash.HASHES, minhash.SEED)
    sketch.update(minhash.shingles(words))
    return tuple(sketch.digest())


# Words of 1 to 12 characters of up to four UTF-8 bytes: pairs from 3 to 97 bytes, so
# every length branch of the hash and its 16-byte chunks are taken.
_WORD = st.text(st.characters(min_codepoint=0x21, max_codepoint=0x2FFFF, exclude_categories=("Cs",)),
                min_size=1, max_size=12)


@given(st.lists(_WORD))
def test_the_c_pair_hashes_are_the_ones_rensa_gives_the_pair_strings(words: list[str]) -> None:
    assert native is not None
    hashes = list(memoryview(native.pair_hashes(" ".join(words))).cast("Q"))
    (expected,) = rensa.RMinHash.hash_token_sets([minhash.shingles(words)])
    assert hashes == list(expected)


@given(st.lists(_WORD, min_size=minhash.MIN_TOKENS, max_size=200) | st.just(TOKENS))
def test_the_signature_from_c_hashes_is_the_one_from_pair_strings(words: list[str]) -> None:
    assert minhash.signature(words) == _signature_from_strings(words)
    assert minhash.signature(tuple(words)) == minhash.signature(" ".join(words)) == minhash.signature(words)


def test_a_lone_surrogate_takes_the_string_path() -> None:
    assert native is not None
    assert native.pair_hashes("词 \ud800 词") is None
    assert native.pair_hashes("") == native.pair_hashes("词") == b""
    assert len(native.pair_hashes("词  词")) == 16  # an empty word between: two pairs, as in shingles
