"""Per-host crawl settings (include/exclude rules, depth, delay, allowed domains), saved
as the console saves them and honoured by the scheduler, on every FrontierState
adapter: SQLite in memory, and a real Redis (marked integration)."""

from __future__ import annotations

import pytest

from services.common.domain.host_settings import BadHostSettings, HostSettings
from services.scheduler import host_settings
from services.scheduler.frontier import Frontier
from tests.manual_clock import ManualClock as Clock
from tests.unit.test_frontier import SITE, answer, links, make_frontier, open_host, state  # noqa: F401  (fixture)

OTHER = "http://other.example.org"


def crawl(f: Frontier, clock: Clock, rounds: int = 20, links_of=None) -> list[str]:
    """Fetch whatever is due, ``rounds`` times, answering 200; the URLs fetched, in order."""
    fetched = []
    for _ in range(rounds):
        for job in f.dispatch():
            if job.kind == "robots":
                f.complete(answer(job, 404))
                continue
            fetched.append(job.url)
            f.complete(answer(job))
            if links_of and job.url in links_of:
                f.offer_links(links(job.url, *links_of[job.url], depth=job.depth))
        clock.now += 10
    return fetched


def saved(f: Frontier, clock: Clock, settings: HostSettings | None, host: str = "example.cn") -> host_settings.Saved:
    result = host_settings.save(f.cfg, f.state, host, settings, clock.now)
    f.host_settings.refresh()  # a scheduler sees it within REFRESH_S; a test need not wait
    return result


def test_include_and_exclude_rules_of_a_host_decide_which_links_are_crawled(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=0.0)
    saved(f, clock, HostSettings(include=(r"/$", r"/docs/"), exclude=(r"\?print=1",)))
    site_links = {f"{SITE}/": [f"{SITE}/docs/a", f"{SITE}/docs/a?print=1", f"{SITE}/blog/b"]}
    assert sorted(crawl(f, clock, links_of=site_links)) == [f"{SITE}/", f"{SITE}/docs/a"]
    assert f.state.url_state(f"{SITE}/blog/b") is None  # out of scope: never admitted


def test_saving_stricter_rules_excludes_queued_urls_and_looser_ones_bring_them_back(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=0.0)
    f.offer_links(links(f"{SITE}/", f"{SITE}/a", f"{SITE}/private/b", f"{SITE}/private/c"))
    assert saved(f, clock, HostSettings(exclude=(r"/private/",))).excluded == 2
    assert f.state.url_state(f"{SITE}/private/b")[:2] == ("excluded", "host_settings")
    assert sorted(crawl(f, clock, rounds=5)) == [f"{SITE}/", f"{SITE}/a"]
    back = saved(f, clock, None)  # back to the crawl-wide settings
    assert (back.excluded, back.readmitted) == (0, 2)
    assert sorted(crawl(f, clock, rounds=5)) == [f"{SITE}/private/b", f"{SITE}/private/c"]
    assert f.state.host_settings() == {}


def test_a_url_leased_after_its_rules_changed_is_not_fetched(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=0.0)
    open_host(f, clock)
    f.offer_links(links(f"{SITE}/", f"{SITE}/x"))
    # Another process saved the settings without touching the queue (an older scheduler).
    f.state.set_host_settings("example.cn", HostSettings(exclude=(r"/x$",)))
    f.host_settings.refresh()
    assert [j.url for j in f.dispatch()] == [f"{SITE}/"]
    assert f.state.url_state(f"{SITE}/x")[:2] == ("excluded", "host_settings")


def test_a_hosts_depth_limit_applies_to_its_own_urls_only(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, seeds=(f"{SITE}/", f"{OTHER}/"), frontier_host_delay_s=0.0, frontier_max_depth=5)
    saved(f, clock, HostSettings(max_depth=1))
    chain = {f"{SITE}/": [f"{SITE}/1"], f"{SITE}/1": [f"{SITE}/2"], f"{OTHER}/": [f"{OTHER}/1"],
             f"{OTHER}/1": [f"{OTHER}/2"]}  # fmt: skip
    fetched = crawl(f, clock, links_of=chain)
    assert sorted(fetched) == sorted([f"{SITE}/", f"{SITE}/1", f"{OTHER}/", f"{OTHER}/1", f"{OTHER}/2"])
    assert f.state.counters().get("limit:max_depth@example.cn") == 1


def test_a_hosts_delay_replaces_the_crawl_wide_one_and_crawl_delay_still_wins(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=1.0)
    saved(f, clock, HostSettings(delay_s=7.0))  # before the host is known: used when it is made
    (robots,) = f.dispatch()
    assert f.state.get_host("example.cn").delay_s == 7.0
    f.complete(answer(robots, 200, robots_txt="User-agent: *\nCrawl-delay: 3\n"))
    assert f.state.get_host("example.cn").delay_s == 7.0
    assert saved(f, clock, HostSettings(delay_s=0.5)).delay_s == 3.0  # robots.txt asks for 3 s
    assert f.state.get_host("example.cn").delay_s == 3.0


def test_allowed_domains_of_a_host_let_its_links_lead_there(state):
    clock = Clock(1_000_000.0)
    f = make_frontier(state, clock, frontier_host_delay_s=0.0)
    site_links = {f"{SITE}/": [f"{OTHER}/a", "http://else.example.net/b"]}
    assert crawl(f, clock, rounds=3, links_of=site_links) == [f"{SITE}/"]
    saved(f, clock, HostSettings(allow_domains=("*.example.org",)))
    f.state.requeue(f"{SITE}/", clock.now)
    assert sorted(crawl(f, clock, rounds=5, links_of=site_links)) == [f"{SITE}/", f"{OTHER}/a"]


def test_bad_settings_are_refused_with_a_chinese_reason() -> None:
    with pytest.raises(BadHostSettings, match="正则"):
        HostSettings(include=("(",))
    with pytest.raises(BadHostSettings, match="最大深度"):
        host_settings.parse_form("", "", "二", "", "", 0.0)
    with pytest.raises(BadHostSettings, match="抓取间隔"):
        host_settings.parse_form("", "", "", "-1", "", 0.0)
    with pytest.raises(BadHostSettings, match="域名"):
        host_settings.parse_form("", "", "", "", "http:// bad/", 0.0)
    form = host_settings.parse_form("/docs/\n\n /faq/ ", "", "3", "0.5", "Example.cn，*.b.cn", 5.0)
    assert form == HostSettings(include=("/docs/", "/faq/"), max_depth=3, delay_s=0.5,
                                allow_domains=("example.cn", "*.b.cn"), updated_at=5.0)  # fmt: skip


def test_a_pattern_sent_as_json_is_kept_as_sent_edge_whitespace_and_all() -> None:
    """Trimming ``"\\f??x"`` would leave ``??x``, which is no regex; the JSON API keeps what it was sent."""
    sent = HostSettings.from_dict({"exclude": ["\f??x", " /a/ "], "allow_domains": [" Example.cn "]})
    assert sent.exclude == ("\f??x", " /a/ ")
    assert sent.allow_domains == ("Example.cn",)
    with pytest.raises(BadHostSettings, match="空"):
        HostSettings.from_dict({"include": ["  "]})
