"""One canonical host for every check (services/common/domain/host_names.py): the
seed check and the crawler must read "127.0.0.1." and "0x7f.1" alike."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from services.common.domain.address_policy import host_is_private
from services.common.domain.host_names import canonical_host
from services.common.domain.url_canonical import canonicalize


@pytest.mark.parametrize(
    ("spelled", "canonical"),
    [
        ("127.0.0.1.", "127.0.0.1"), ("127.0.0.1..", "127.0.0.1"), ("LOCALHOST.", "localhost"),
        ("127.1", "127.0.0.1"), ("0x7f.1", "127.0.0.1"), ("0x7F000001", "127.0.0.1"), ("2130706433", "127.0.0.1"),
        ("0177.0.0.1", "127.0.0.1"), ("127.0.0.1%2e", "127.0.0.1"), ("[::FFFF:127.0.0.1]", "::ffff:7f00:1"),
        ("Www.Example.CN.", "www.example.cn"), ("1.2.3.4.5", "1.2.3.4.5"), ("256.1.1.1", "256.1.1.1"),
        ("example.0x1", "example.0x1"), ("08.1.1.1", "08.1.1.1"),
    ],
)  # fmt: skip
def test_a_host_has_one_spelling(spelled: str, canonical: str) -> None:
    assert canonical_host(spelled) == canonical


@given(st.text(st.sampled_from("0123456789abcdefx.%[]:ABCDEFX- "), max_size=24))
# Found by this test: a percent sign encoded twice, a dot or a space after brackets or
# another space (decoded, trimmed and unbracketed only once, each read again otherwise).
@example("%2500")
@example("[::1].")
@example("0 .")
@example("[ ::1 ]")
def test_canonicalising_a_host_twice_changes_nothing(host: str) -> None:
    once = canonical_host(host)
    assert canonical_host(once) == once


@pytest.mark.parametrize("host", ["127.0.0.1.", "localhost.", "LOCALHOST..", "127.1", "0x7f.1", "2130706433",
                                  "10.0.0.1.", "169.254.169.254.", "[::1]", "0.0.0.0."])  # fmt: skip
def test_every_spelling_of_a_private_host_is_private(host: str) -> None:
    assert host_is_private(host)


def test_canonical_urls_use_the_canonical_host() -> None:
    assert canonicalize("http://127.0.0.1./a") == "http://127.0.0.1/a"
    assert canonicalize("http://0x7f.1:8080/") == "http://127.0.0.1:8080/"
    assert canonicalize("HTTP://Docs.Example.CN./x") == "http://docs.example.cn/x"
