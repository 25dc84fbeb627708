"""Edges of the scheduler's recrawl timing, robots.txt cap and Retry-After, against
RFC 9309, RFC 9110 and docs/operations.md ("Freshness, politeness and duplicates"), found by a
review of the crawl's politeness. Hand-moved clock, SQLite in memory: no network.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Iterator
from email.utils import formatdate
from itertools import pairwise
from pathlib import Path

import pytest

from services.common.adapters.sqlite.frontier import SqliteFrontierState
from services.common.config import Settings
from services.common.domain.messages import FetchJob, LinkBatch, Outlink, PageEvent
from services.crawler.message_caps import OutcomeCaps, cap_robots
from services.scheduler.frontier import Frontier
from services.scheduler.retry_after import retry_after_until
from services.scheduler.robots_rules import RobotsRules
from services.scheduler.scope import Scope
from tests.manual_clock import ManualClock as Clock

SITE = "http://example.cn"
HOST = "example.cn"
HOUR = 3600.0
DAY = 86_400.0
USER_AGENT = Settings(data_dir=Path("unused")).crawler_user_agent  # "TansuoBot/0.1 (+…)"


@pytest.fixture(autouse=True)
def _quiet_frontier_warnings() -> Iterator[None]:
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def make(clock: Clock, **overrides) -> Frontier:
    overrides.setdefault("frontier_sitemaps", False)
    cfg = Settings(data_dir=Path("unused"), **overrides)
    f = Frontier(cfg, SqliteFrontierState(Path(":memory:")), Scope.from_settings(cfg, [f"{SITE}/"]), clock=clock)
    f.add_seeds([f"{SITE}/"])
    return f


def answer(job: FetchJob, status: int = 200, **fields) -> PageEvent:
    return PageEvent(url=job.url, host=job.host, lease_id=job.lease_id, kind=job.kind, depth=job.depth,
                     status=status, **fields)  # fmt: skip


def serve_robots(f: Frontier, clock: Clock, status: int = 404, robots: str = "") -> None:
    (job,) = f.dispatch()
    assert job.kind == "robots"
    f.complete(answer(job, status, robots_txt=robots))
    clock.now += 10


def run_continuously(f: Frontier, clock: Clock, seconds: float, respond, step: float = 60.0) -> list[tuple[float, FetchJob]]:
    """Sweep and dispatch every ``step`` seconds, as `tansuo crawl --continuous` does;
    ``respond(job)`` gives the outcome's (status, fields). Returns every request sent."""
    sent = []
    end = clock.now + seconds
    while clock.now < end:
        f.sweep_recrawl()
        for job in f.dispatch():
            sent.append((clock.now, job))
            status, fields = respond(job)
            f.complete(answer(job, status, **fields))
        clock.now += step
    return sent


# --- recrawl timing ------------------------------------------------------------------


@pytest.mark.parametrize(
    "status, fields",
    [(404, {}), (410, {}), (301, {"redirect_to": f"{SITE}/new"})],
    ids=["404-every-time", "410-every-time", "same-redirect-every-time"],
)
def test_a_url_that_answers_the_same_every_time_backs_off_like_an_unchanged_page(status, fields):
    # docs/operations.md: "when the page comes back unchanged ... the interval doubles ... within
    # [5 minutes, 30 days]". A URL that keeps answering 404/410, or keeps redirecting to
    # the same place, has not changed either; Nutch sends gone pages to the maximum
    # interval. Its interval was reset to the first hour on every fetch.
    clock = Clock(1_700_000_000.0)
    f = make(clock, frontier_host_delay_s=0)
    serve_robots(f, clock)

    def respond(job):
        return (status, fields) if job.url == f"{SITE}/" else (200, {"content_hash": "target"})

    sent = run_continuously(f, clock, 10 * DAY, respond)
    fetches = [t for t, job in sent if job.url == f"{SITE}/"]
    # An unchanged HTML page is fetched 8 times in these 10 days (1, 2, 4 ... 64 h apart).
    gaps = sorted({round((b - a) / HOUR, 1) for a, b in pairwise(fetches)})
    assert len(fetches) <= 10, f"{len(fetches)} fetches of one {status} URL in 10 days, {gaps} h apart"




def test_urls_of_a_host_whose_robots_txt_stays_unreachable_back_off():
    # docs/operations.md: "A URL that failed its quick retries is tried again after 1 hour and backs
    # off the same way." The URLs of a host given up because its robots.txt answers 503
    # came back after exactly one hour, every hour, for ever: the host's robots.txt was
    # asked 24 times a day however long it had been down.
    clock = Clock(1_700_000_000.0)
    f = make(clock)
    sent = run_continuously(f, clock, 4 * DAY, lambda job: (503, {}))
    times = [t for t, _ in sent]
    gaps = [b - a for a, b in pairwise(times)]
    assert gaps[-1] > 2 * HOUR, f"{len(times)} robots.txt requests in 4 days; the last gaps {gaps[-3:]} s"


# --- robots.txt ----------------------------------------------------------------------


def test_new_links_to_a_host_given_up_over_its_robots_txt_do_not_fetch_it_again():
    # RFC 9309 2.3.1.4: an unreachable robots.txt defers the host. Once given up, each
    # new link to the host started another robots.txt fetch, and another give-up: about
    # one request a second for as long as links kept coming.
    clock = Clock(1_700_000_000.0)
    f = make(clock, frontier_host_delay_s=1.0)
    robots_requests = 0
    for second in range(600):  # a crawled page elsewhere links here once a second
        f.offer_links(LinkBatch(source="http://other.cn/", depth=0,
                                    links=[Outlink(f"{SITE}/page-{second}.html")]))  # fmt: skip
        for job in f.dispatch():
            assert job.kind == "robots"
            robots_requests += 1
            f.complete(answer(job, 503))
        clock.now += 1
    # The retries before giving up (3 by default, backing off), then nothing for the hour.
    assert robots_requests <= Settings(data_dir=Path("unused")).frontier_max_fetch_failures, robots_requests
    info = f.state.get_host(HOST)
    assert info.robots_state == "failed" and info.robots_retry_at > clock.now
    assert f.counts().queued == 0, "new URLs of the host wait as failed, so a one-pass crawl ends"
    assert f.state.url_state(f"{SITE}/page-599.html")[0] == "failed"


def test_a_host_given_up_over_its_robots_txt_is_asked_again_at_its_retry_time():
    clock = Clock(1_700_000_000.0)
    f = make(clock, frontier_host_delay_s=0)
    start = clock.now
    sent = run_continuously(f, clock, 3 * HOUR, lambda job: (503, {}) if clock.now < start + HOUR
                            else ((200, {"robots_txt": "User-agent: *\nAllow: /\n"}) if job.kind == "robots"
                                  else (200, {"content_hash": "h"})))  # fmt: skip
    kinds = [job.kind for _, job in sent]
    assert "page" in kinds, kinds  # the host came back once its robots.txt answered
    info = f.state.get_host(HOST)
    assert info.robots_state == "ready" and info.block_reason == ""


def test_a_url_disallowed_then_allowed_by_a_refreshed_robots_txt_comes_back():
    # robots.txt is fetched again after its TTL; a URL its old rules excluded stayed
    # excluded for ever, whatever the new rules said.
    clock = Clock(1_700_000_000.0)
    f = make(clock, frontier_host_delay_s=0)
    serve_robots(f, clock, 200, "User-agent: *\nDisallow: /drafts/\n")
    f.offer_links(LinkBatch(source=f"{SITE}/", depth=0, links=[Outlink(f"{SITE}/drafts/a.html")]))
    assert f.state.url_state(f"{SITE}/drafts/a.html")[:2] == ("excluded", "robots")
    (seed,) = f.dispatch()
    f.complete(answer(seed, 200, content_hash="seed"))
    clock.now += Settings(data_dir=Path("unused")).frontier_robots_ttl_s + 1
    f.offer_links(LinkBatch(source=f"{SITE}/", depth=0, links=[Outlink(f"{SITE}/later.html")]))
    (job,) = f.dispatch()  # the stale robots.txt expired: the host asks for it again
    assert job.kind == "robots"
    f.complete(answer(job, 200, robots_txt="User-agent: *\nDisallow: /private/\n"))
    assert f.state.url_state(f"{SITE}/drafts/a.html")[0] == "queued"
    clock.now += 10
    assert f"{SITE}/drafts/a.html" in {j.url for j in f.dispatch()}


@pytest.mark.parametrize(
    "robots, path, allowed",
    [
        ("User-agent: Tansuo\nDisallow: /\n", "/a", True),  # another crawler's group
        ("User-agent: Tansuo\nDisallow: /\n\nUser-agent: *\nDisallow: /x\n", "/a", True),
        ("User-agent: Tansuo\nDisallow: /\n\nUser-agent: *\nDisallow: /x\n", "/x", False),
        ("User-agent: tansuobot\nDisallow: /mine\n", "/mine", False),  # any case
        ("User-agent: TansuoBot/2.1\nDisallow: /mine\n", "/mine", False),  # a version after the token
        ("User-agent: TansuoBotNext\nDisallow: /\n", "/a", True),
        ("User-agent: Googlebot\nUser-agent: TansuoBot\nDisallow: /g\n", "/g", False),  # one group, two names
    ],
)
def test_robots_groups_match_the_whole_product_token(robots, path, allowed):
    # RFC 9309 2.2.1: crawlers match their product token, case-insensitively. protego
    # matched "Tansuo" as the start of "TansuoBot" and applied another crawler's group.
    rules = RobotsRules(USER_AGENT)
    assert rules.allowed(HOST, robots, f"{SITE}{path}") is allowed


def test_an_oversized_robots_txt_with_cr_line_ends_keeps_its_first_rules():
    # RFC 9309 2.1: EOL = %x0A / %x0D / %x0D.0A. docs/crawl-limits.md: robots.txt is
    # "cut at a line end" at 512 KiB. A file with CR line ends has no "\n": a cut at the
    # last "\n" kept nothing, and an empty robots.txt allows everything.
    robots = "User-agent: *\rDisallow: /private/\r" + "# padding line of a big file\r" * 20_000
    assert len(robots) > 512 * 1024
    capped, hits = cap_robots(robots, OutcomeCaps())
    assert hits == ["robots_size"]
    assert not RobotsRules(USER_AGENT).allowed(HOST, capped, f"{SITE}/private/x"), f"capped to {capped[:40]!r}"




# --- Retry-After ---------------------------------------------------------------------


@pytest.fixture
def shanghai_time() -> Iterator[None]:
    before = os.environ.get("TZ")
    os.environ["TZ"] = "Asia/Shanghai"
    time.tzset()
    yield
    if before is None:
        del os.environ["TZ"]
    else:
        os.environ["TZ"] = before
    time.tzset()


def test_retry_after_in_asctime_form_is_gmt_whatever_the_local_time_zone(shanghai_time):
    # RFC 9110 5.6.7: a recipient MUST accept all three HTTP-date forms, all of them GMT.
    # email.utils reads the asctime form (no zone) as a naive datetime, which .timestamp()
    # takes as local time: on a scheduler in UTC+8 a one-hour wait ended at once.
    now = 1_800_000_000.0
    asctime = time.strftime("%a %b %e %H:%M:%S %Y", time.gmtime(now + HOUR))  # "Fri Jan 15 09:00:00 2027"
    assert retry_after_until(formatdate(now + HOUR, usegmt=True), now) == pytest.approx(now + HOUR, abs=1)
    assert retry_after_until(asctime, now) == pytest.approx(now + HOUR, abs=1), asctime


def test_a_retry_after_that_is_not_ascii_digits_is_ignored_not_a_crash():
    # delta-seconds is 1*DIGIT (ASCII). str.isdigit() also accepts "²", and float() then
    # raised in Frontier.complete: the scheduler dropped the outcome as malformed, held
    # the lease for its timeout (10 min), and fetched the URL again, for ever.
    clock = Clock(1_000_000.0)
    f = make(clock)
    serve_robots(f, clock)
    (job,) = f.dispatch()
    f.complete(answer(job, 503, retry_after="²"))
    assert f.state.url_state(job.url)[0] == "queued"  # a retry, after the backoff
