"""Site names by fold key: known keys answer at once, an unknown one asks the index once a view."""

from __future__ import annotations

from services.common.adapters.tantivy.fold_keys import SiteNames, key


def test_an_unknown_key_asks_the_index_once_a_view() -> None:
    asked: list[int] = []
    sites = ["a.cn"]

    def all_sites() -> list[str]:
        asked.append(1)
        return list(sites)

    names = SiteNames(all_sites)
    assert names.name(key("a.cn"), view=1) == "a.cn"
    assert names.name(key("b.cn"), view=1) is None  # not in the index's answer: the hit reads it
    assert len(asked) == 1
    sites.append("b.cn")
    assert names.name(key("b.cn"), view=2) == "b.cn"  # a new view may know it
    assert names.name(key("a.cn"), view=3) == "a.cn"  # known keys never ask again
    assert names.name(key(""), view=3) == ""
    assert len(asked) == 2
