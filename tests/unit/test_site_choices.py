"""The web UI's site filter: listed once per index view, typed when there are many."""

from __future__ import annotations

from pathlib import Path

from services.api.app import create_app
from services.common.config import Settings
from services.search.site_choices import SELECT_LIMIT, SiteChoices
from tests.manual_clock import ManualClock


class Index:
    def __init__(self, sites: list[str]) -> None:
        self.listed = 0
        self.version: object | None = 1
        self._sites = sites

    def sites(self) -> list[str]:
        self.listed += 1
        return self._sites

    def view_version(self) -> object | None:
        return self.version


def test_sites_are_listed_once_per_index_view() -> None:
    index = Index(["a.cn", "b.cn"])
    choices = SiteChoices(index)  # type: ignore[arg-type]
    assert choices.sites() == choices.sites() == ["a.cn", "b.cn"]
    index.version = 2
    choices.sites()
    assert index.listed == 2


def test_a_backend_that_cannot_tell_its_view_is_listed_again_after_the_ttl() -> None:
    index, clock = Index(["a.cn"]), ManualClock()
    index.version = None
    choices = SiteChoices(index, ttl_s=60, clock=clock)  # type: ignore[arg-type]
    choices.sites()
    clock.now += 30
    choices.sites()
    clock.now += 31
    choices.sites()
    assert index.listed == 2


def test_a_failing_listing_offers_no_sites_and_is_asked_again() -> None:
    class Broken(Index):
        def sites(self) -> list[str]:
            self.listed += 1
            raise ConnectionError("es:9200 refused")

    index = Broken([])
    choices = SiteChoices(index)  # type: ignore[arg-type]
    assert choices.sites() == [] and choices.sites() == []
    assert index.listed == 2


def _home(sites: list[str]) -> str:
    class Stub(Index):
        def count(self) -> int:
            return 5

        def ping(self) -> None:
            pass

    app = create_app(Settings(data_dir=Path("/nonexistent")), index=Stub(sites))  # type: ignore[arg-type]
    return app.test_client().get("/").get_data(as_text=True)


def test_a_few_sites_are_a_list_to_pick_from_and_many_a_box_to_type_in() -> None:
    few = _home([f"s{n}.example.cn" for n in range(3)])
    assert '<select id="site"' in few and "s2.example.cn</option>" in few
    many = _home([f"s{n}.example.cn" for n in range(SELECT_LIMIT + 1)])
    assert '<select id="site"' not in many and 'class="site-input"' in many
    assert "s7.example.cn" not in many  # no option per site
    assert f"{SELECT_LIMIT + 1:,}" in many
