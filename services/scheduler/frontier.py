"""The crawl frontier: what to fetch next, and when, so that every host is treated politely.

Service logic only: it talks to a FrontierState port and never knows the backend.
The clock is injectable so tests can move time instead of sleeping.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence
from urllib.parse import urlsplit

from services.common.config import Settings
from services.common.domain.frontier_types import (
    FrontierCounts,
    HostInfo,
    HostUpdate,
    Lease,
    NewUrl,
    UrlInfo,
    UrlUpdate,
)
from services.common.domain.messages import (
    FetchJob,
    LinkBatch,
    Outlink,
    PageEvent,
    PageRemoval,
)
from services.common.domain.url_canonical import BadUrl, canonicalize, host_of
from services.common.ports import FrontierState
from services.common.runtime.metrics import LIMIT_HITS
from services.scheduler.host_settings import NOTE as HOST_SETTINGS_NOTE
from services.scheduler.host_settings import HostSettingsView, host_delay
from services.scheduler.recrawl_policy import (
    failure_interval,
    given_up_interval,
    next_interval,
    parse_lastmod,
)
from services.scheduler.retry_after import retry_after_until
from services.scheduler.robots_rules import RobotsRules
from services.scheduler.scope import Scope, seed_domains
from services.scheduler.url_limits import UrlLimits

log = logging.getLogger(__name__)

# Errors that another try will not fix: the URL is finished, not retried.
_FINAL_ERRORS = {"private_address", "too_large", "not_html", "bad_url"}
_MAX_HOST_SLOWDOWN_S = 3600.0
# Lease and robots.txt expiry runs at most this often (see Frontier._expire).
EXPIRY_INTERVAL_S = 1.0
# A host's clock restarts when the crawler saw its response end, up to this long before
# the outcome reached the scheduler (see Frontier._fetch_ended).
RELEASE_CREDIT_S = 0.25
# Answered twice in a row, the page leaves the index: it is gone, or no longer public
# (401, 403: behind a login now; 451: withdrawn for legal reasons), and a search
# result that leads to either is a dead end.
_GONE = (401, 403, 404, 410, 451)
# Fetch errors that are a crawler limit at work: the page size (also decompressed) and
# the wall time of one request.
_ERROR_LIMITS = {"too_large": "page_size", "timeout": "wall_time"}
# Scope reasons that are choices of the operator, not limits a crawl ran into.
_NOT_LIMITS = frozenset({"off_domain", "not_included", "excluded_pattern"})
_GIVEN_UP = "given up: "


def counts_as_error(event: PageEvent, update: UrlUpdate) -> bool:
    """The one definition of a crawl's "errors" (the ``errors`` counter, which the
    progress line, the last line, `tansuo report` and the console all show): a page
    whose fetch ended, after its retries, in a 4xx or 5xx answer or in no answer. A
    retry still to come, robots.txt and sitemaps are not counted."""
    if event.kind != "page" or update.state not in ("done", "failed"):
        return False
    return update.state == "failed" or not event.status or event.status >= 400


def outcome_note(event: PageEvent) -> str:
    """What the frontier notes about a URL's answer; the crawl report reads it. A file
    that is not HTML is noted with its type (``not_html:application/pdf``)."""
    if event.error == "not_html" and event.content_type:
        return f"not_html:{event.content_type}"
    if event.error:
        return event.error
    if event.redirect_to:
        return "redirect"
    if event.status == 304:
        return "not_modified"
    if event.noindex and 200 <= event.status < 300:
        return "noindex"
    return ""


class Frontier:
    def __init__(
        self,
        cfg: Settings,
        state: FrontierState,
        scope: Scope,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.cfg = cfg
        self.state = state
        # Domains submitted with seeds to a running crawl stay in scope after a restart.
        self.scope = scope.with_domains(state.scope_domains())
        self.clock = clock
        self.robots = RobotsRules(cfg.crawler_user_agent)
        self.limits = UrlLimits.from_settings(cfg)
        self._expiry_due: dict[frozenset[int] | None, float] = {}
        # Operators' per-host settings (services/scheduler/host_settings.py): the scope
        # widened by their allowed domains is remade when they or the scope change.
        self.host_settings = HostSettingsView(state)
        self._widened: tuple[Scope, int, Scope] | None = None  # (scope, settings version, widened)

    def _scope(self) -> Scope:
        """The crawl's scope plus every domain some host's settings allow."""
        domains = self.host_settings.allowed_domains()  # refreshes the version first
        widened = self._widened
        if widened is None or widened[0] is not self.scope or widened[1] != self.host_settings.version:
            widened = self._widened = (self.scope, self.host_settings.version, self.scope.with_domains(domains))
        return widened[2]

    def rejects(self, url: str) -> str:
        """Why a canonical URL is out of the crawl (scope, then its host's settings), or ""."""
        settings = self.host_settings.of(host_of(url))
        if settings is None:
            return self._scope().rejects(url)
        # A host's include rules stand instead of the crawl-wide ones; excludes add up.
        return self._scope().rejects(url, check_include=not settings.include) or settings.rejects(url)

    def _max_depth(self, host: str) -> int | None:
        settings = self.host_settings.of(host)
        if settings is not None and settings.max_depth is not None:
            return settings.max_depth
        return self.cfg.frontier_max_depth

    # --- admitting URLs ---------------------------------------------------------------

    def add_seeds(self, urls: Iterable[str]) -> list[str]:
        """Seeds skip the depth limit but not the scope; a seed that failed before is retried."""
        accepted = []
        for raw in urls:
            try:
                url = canonicalize(raw)
            except BadUrl:
                log.warning("ignoring seed that is not an http(s) URL: %s", raw)
                continue
            reason = self.rejects(url)
            if reason:
                log.warning("seed %s is out of scope (%s)", url, reason)
                continue
            self._admit([(url, 0)])
            self.state.requeue_seed(url, self.clock())
            accepted.append(url)
        return accepted

    def submit_seeds(self, urls: list[str], allow_domains: list[str]) -> list[str]:
        """Seeds sent to a running crawl: their domains (or, with none given, their hosts)
        join the scope for good, then the seeds are admitted like any other."""
        domains = list(allow_domains) or seed_domains(urls)
        self.scope = self.scope.with_domains(domains)  # raises ValueError on a bad domain
        self.state.add_scope_domains(domains)
        return self.add_seeds(urls)

    def offer_links(self, batch: LinkBatch) -> int:
        """Admit a page's outlinks, or a sitemap's entries; returns how many were new."""
        if batch.kind == "sitemap":
            return self._offer_sitemap(batch)
        if batch.kind == "redirect":
            return 0  # for the link graph: the target was admitted from the page event, as a hop
        depth = batch.depth + 1
        if not self.host_settings.any_depth():
            if self.cfg.frontier_max_depth is not None and depth > self.cfg.frontier_max_depth:
                self.count_limits(Counter({"max_depth": len(batch.links)}), host_of(batch.source))
                return 0
            return len(self._admit([(url, depth) for url in self._in_scope(link.url for link in batch.links)]))
        # Some host has a depth of its own: each link is held to its own host's.
        kept, cut = [], Counter[str]()
        for url in self._in_scope(link.url for link in batch.links):
            limit = self._max_depth(host_of(url))
            if limit is not None and depth > limit:
                cut[host_of(url)] += 1
            else:
                kept.append((url, depth))
        for host, n in cut.items():
            self.count_limits(Counter({"max_depth": n}), host)
        return len(self._admit(kept))

    def _in_scope(self, urls: Iterable[str]) -> list[str]:
        """Canonical URLs in scope and within the trap limits; limit hits are counted."""
        kept = []
        hits: dict[str, Counter[str]] = {}
        for raw in urls:
            try:
                url = canonicalize(raw)
            except BadUrl:
                continue
            reason = self.rejects(url) or self.limits.exceeded(url)
            if not reason:
                kept.append(url)
            elif reason not in _NOT_LIMITS:
                hits.setdefault(host_of(url), Counter())[reason] += 1
        for host, counted in hits.items():
            self.count_limits(counted, host)
        return kept

    def count_limits(self, hits: Counter[str], host: str) -> None:
        """Each time a limit cut something: a metric, and frontier counters that
        `tansuo frontier` shows (``limit:<name>``) and `tansuo report` per host
        (``limit:<name>@<host>``)."""
        for name, n in hits.items():
            if n:
                LIMIT_HITS.labels(limit=name).inc(n)
                self.state.bump(f"limit:{name}", n)
                self.state.bump(f"limit:{name}@{host}", n)

    def _offer_sitemap(self, batch: LinkBatch) -> int:
        """Sitemap entries are like seeds (depth 0: no page links to them, maybe); a
        <lastmod> newer than our last fetch brings a known page back at once."""
        self._admit([(u, 0) for u in self._in_scope(batch.sitemaps)], kind="sitemap")
        lastmods = {}
        for link in batch.links:
            for url in self._in_scope([link.url]):
                lastmods[url] = parse_lastmod(link.lastmod)
        added = {u.url for u in self._admit([(u, 0) for u in lastmods])}
        now = self.clock()
        for url, lastmod in lastmods.items():
            if url in added or lastmod is None:
                continue
            info = self.state.url_info(url)
            if info is not None and info.fetched_at is not None and lastmod > info.fetched_at:
                self.state.requeue(url, now)
        return len(added)

    def _admit(self, urls: list[tuple[str, int]], kind: str = "page", robots_txt: str | None = None) -> list[NewUrl]:
        """``robots_txt``: rules to judge by instead of the host's current ones."""
        if not urls:
            return []
        records = []
        # One read of every host of the batch, not one per URL: a page's links are
        # mostly on its own host, and nothing below changes a host until add_urls.
        hosts = self._hosts({host_of(url): urlsplit(url).scheme for url, _ in urls})
        for url, depth in urls:
            host = host_of(url)
            info = hosts[host]
            rules = robots_txt if robots_txt is not None else (info.robots_txt if info.robots_state == "ready" else None)
            if rules is not None and not self.robots.allowed(host, rules, url):
                records.append(NewUrl(url, host, depth, state="excluded", note="robots", kind=kind))
            else:
                records.append(NewUrl(url, host, depth, kind=kind))
        now = self.clock()
        added = self.state.add_urls(records, now, self.cfg.frontier_host_page_budget)
        self._park_for_failed_robots(added, hosts, now)
        return added

    def _park_for_failed_robots(self, added: list[NewUrl], hosts: dict[str, HostInfo], now: float) -> None:
        """New URLs of a host given up over its robots.txt wait with its other URLs,
        failed until the host's retry time: queued, each would claim the host's
        robots.txt again at once, a request a link while links keep coming."""
        waiting: dict[str, list[str]] = {}
        for u in added:
            info = hosts[u.host]
            if info.robots_state == "failed" and info.robots_retry_at > now:
                waiting.setdefault(u.host, []).append(u.url)
        for host, urls in waiting.items():
            info = hosts[host]
            reason = info.block_reason.removeprefix(f"{_GIVEN_UP}robots.txt ") or "robots"
            self.state.drop_queued(urls, "failed", f"failed: host_unavailable:{reason}", due_at=info.robots_retry_at)

    def _hosts(self, schemes: dict[str, str]) -> dict[str, HostInfo]:
        """Each host named (with the scheme of its first URL), new ones ensured."""
        infos = self.state.get_hosts(list(schemes))
        missing = [host for host in schemes if host not in infos]
        for host in missing:
            self.state.ensure_host(host, schemes[host], host_delay(self.cfg, self.host_settings.of(host)))
        if missing:
            infos.update(self.state.get_hosts(missing))
        return infos

    # --- handing out work -------------------------------------------------------------

    def dispatch(self, limit: int = 64, shards: Collection[int] | None = None) -> list[FetchJob]:
        """Jobs that may be fetched now without breaking any host's politeness, from the
        hosts of ``shards`` (None: every host; see FrontierState)."""
        now = self.clock()
        self._expire(now, shards)
        jobs = [self._robots_job(h) for h in self.state.claim_robots(now, limit, shards)]
        room = self._page_room()
        if room > 0 and len(jobs) < limit:
            leases = self.state.lease_due(
                now, min(limit - len(jobs), room), self.cfg.effective_parallelism, self.cfg.frontier_max_in_flight,
                shards,
            )  # fmt: skip
            hosts = self.state.get_hosts([lease.host for lease in leases]) if leases else {}
            for lease in leases:
                job = self._page_job(lease, hosts.get(lease.host))
                if job is not None:
                    jobs.append(job)
        return jobs

    def _expire(self, now: float, shards: Collection[int] | None) -> None:
        """Lost leases and stale robots.txt, looked for at most once a second per set of
        shards: each is a write transaction, and a busy scheduler dispatches after
        every outcome, while the timeouts they enforce are tens of seconds or more."""
        key = frozenset(shards) if shards is not None else None
        if now < self._expiry_due.get(key, 0.0):
            return
        self._expiry_due[key] = now + EXPIRY_INTERVAL_S
        self.state.expire_leases(now, self.cfg.frontier_lease_timeout_s, shards)
        # A robots.txt job can be lost like any other; its host must not wait forever.
        for host in self.state.expire_robots_claims(now, self.cfg.frontier_lease_timeout_s, shards):
            log.warning("robots.txt of %s never reported back; it will be fetched again", host)
        self.state.expire_robots(now - self.cfg.frontier_robots_ttl_s, shards)

    def release_unsent(self, jobs: Sequence[FetchJob]) -> None:
        """Take back jobs that were leased but could not be sent (the bus refused them):
        their URLs are queued again and their hosts' slots freed."""
        now = self.clock()
        for job in jobs:
            if job.kind == "robots":
                self.state.update_host(job.host, HostUpdate(robots_state="unknown"), now, True)
            else:
                self.state.unlease(job.url, now, "queued", "")

    def _page_room(self) -> int:
        """Pages the --max-pages budget still allows to be leased."""
        if self.cfg.frontier_max_pages is None:
            return 1 << 30
        counts = self.state.counts(self.clock())
        return self.cfg.frontier_max_pages - counts.fetched - counts.leased

    @staticmethod
    def _robots_job(info: HostInfo) -> FetchJob:
        url = f"{info.scheme}://{info.host}/robots.txt"
        return FetchJob(url=url, host=info.host, lease_id=f"robots:{info.host}", kind="robots")

    def _page_job(self, lease: Lease, info: HostInfo | None) -> FetchJob | None:
        # robots.txt may have been refreshed since the URL was queued.
        if info is not None and not self.robots.allowed(lease.host, info.robots_txt, lease.url):
            self.state.unlease(lease.url, self.clock(), "excluded", "robots")
            return None
        # So may the host's settings (saved in the console while the URL waited).
        settings = self.host_settings.of(lease.host)
        if settings is not None and settings.rejects(lease.url):
            self.state.unlease(lease.url, self.clock(), "excluded", HOST_SETTINGS_NOTE)
            return None
        return FetchJob(
            url=lease.url,
            host=lease.host,
            lease_id=lease.lease_id,
            depth=lease.depth,
            kind=lease.kind,
            etag=lease.etag,
            last_modified=lease.last_modified,
        )

    # --- outcomes ---------------------------------------------------------------------

    def complete(
        self, event: PageEvent, publish_removals: Callable[[list[PageRemoval]], None] | None = None
    ) -> list[PageRemoval]:
        """Record a fetch outcome; returns the URLs that must now leave the index.

        Follow-up work comes before the outcome is recorded: once it is, a replay of the
        event (the scheduler killed before committing it) is stale and does nothing, so
        work left for after would be lost for good. So the redirect target is admitted
        first, then ``publish_removals`` (which must make them durable: publish and
        flush) is called, and only then is the URL's lease finished. A crash in
        between replays the event and does it all again; each step is idempotent.
        """
        if event.kind == "robots":
            self._complete_robots(event)
            return []
        if event.extracted:
            self._record_extraction(event)
            return []
        return self._complete_page(event, publish_removals)

    def _record_extraction(self, event: PageEvent) -> None:
        """A document's text came back from the extractor, after its fetch was recorded:
        what cut or skipped it is counted per host for `tansuo report`
        (``document:<outcome>@<host>``) and, for the caps, as crawl limits. A replayed
        extraction counts again: these are counters, as the limits' are."""
        outcome = event.error.removeprefix("document_") if event.error else (
            "cut" if any(x.startswith("document_") for x in event.limits) else "extracted")
        self.state.bump(f"document:{outcome}@{event.host}")
        if event.error:  # skipped: the crawl report lists it, with why
            self.state.note_fetched(event.url, f"document:{outcome}")
        self.count_limits(Counter(x for x in event.limits if x.startswith("document_")), event.host)

    def _complete_robots(self, event: PageEvent) -> None:
        info = self.state.get_host(event.host)
        if info is None or info.robots_state != "fetching":
            return  # a replayed event: the host has moved on
        self.count_limits(Counter(event.limits), event.host)
        now = self.clock()
        ended = self._fetch_ended(event, now)  # the host's clock restarts as for a page
        if 200 <= event.status < 300:
            self._robots_ready(info, event.robots_txt, now, ended)
        elif 400 <= event.status < 500 and event.status != 429:
            self._robots_ready(info, "", now, ended)  # no robots.txt: everything is allowed
        elif 300 <= event.status < 400:
            # The crawler follows robots.txt redirects (crawler_robots_max_redirects, five
            # by default); one still redirecting after them counts as unavailable, which
            # RFC 9309 2.3.1.2 allows: like a missing file, allow all.
            self._robots_ready(info, "", now, ended)
        else:
            self._robots_failed(info, event, now)

    def _robots_ready(self, info: HostInfo, robots_txt: str, now: float, ended: float) -> None:
        # Follow-up work first, as in complete(): once the host is marked ready, a
        # replayed robots event is ignored, and the work would never be done.
        blocked = [u for u in self.state.queued_urls(info.host) if not self.robots.allowed(info.host, robots_txt, u)]
        if blocked:
            self.state.drop_queued(blocked, "excluded", "robots")
        if info.robots_txt is not None and info.robots_txt != robots_txt:
            # URLs the old rules excluded come back once the new ones allow them.
            allowed = [u for u in self.state.excluded_urls(info.host, "robots")
                       if self.robots.allowed(info.host, robots_txt, u)]  # fmt: skip
            if allowed:
                self.state.readmit(allowed, "robots", now)
        if self.cfg.frontier_sitemaps:
            listed = self.robots.sitemaps(info.host, robots_txt)
            sitemaps = self._in_scope(listed or [f"{info.scheme}://{info.host}/sitemap.xml"])
            # Admitted as excluded or not by the rules about to apply, not the old ones.
            self._admit([(u, 0) for u in sitemaps], kind="sitemap", robots_txt=robots_txt)
        crawl_delay = self.robots.crawl_delay(info.host, robots_txt)
        delay = max(host_delay(self.cfg, self.host_settings.of(info.host)), crawl_delay or 0.0)
        recovered = info.block_reason.startswith(f"{_GIVEN_UP}robots.txt")
        update = HostUpdate(
            robots_state="ready", robots_txt=robots_txt, robots_fetched_at=now, robots_failures=0, delay_s=delay,
            block_reason="" if recovered else None,
        )
        self.state.update_host(info.host, update, ended, release=True)

    def _robots_failed(self, info: HostInfo, event: PageEvent, now: float) -> None:
        """A 5xx or unreachable robots.txt defers the whole host (RFC 9309 section 2.3.1.4)."""
        failures = info.robots_failures + 1
        if event.error in _FINAL_ERRORS or failures >= self.cfg.frontier_max_fetch_failures:
            reason = event.error or f"robots_http_{event.status}"
            # The failures go on counting across passes: the interval doubles with each
            # pass that finds the host still down (it was an hour, for ever).
            retry_at = now + given_up_interval(self.cfg, max(0, failures - self.cfg.frontier_max_fetch_failures))
            update = HostUpdate(robots_state="failed", robots_failures=failures, robots_retry_at=retry_at,
                                block_reason=f"{_GIVEN_UP}robots.txt {reason}")  # fmt: skip
            self.state.update_host(info.host, update, now, True)
            self.state.bump("hosts_given_up")
            self.state.drop_queued(
                self.state.queued_urls(info.host), "failed", f"failed: host_unavailable:{reason}", due_at=retry_at
            )
            log.warning("giving up on host %s: robots.txt unavailable (%s)", info.host, reason)
            return
        until = retry_after_until(event.retry_after, now) or now + self._backoff(failures)
        update = HostUpdate(
            robots_state="unknown",
            robots_failures=failures,
            blocked_until=until,
            block_reason=f"robots.txt {event.status or event.error}",
        )
        self.state.update_host(info.host, update, now, release=True)

    @staticmethod
    def _fetch_ended(event: PageEvent, now: float) -> float:
        """When the host's politeness clock restarts: when the crawler saw the response
        end (``fetched_at``), not when the outcome reached the scheduler, which is later
        by the trip through the crawler's pipeline and the bus (tens of milliseconds
        embedded, more through a broker): each such delay otherwise adds to every gap a
        host waits. At most ``RELEASE_CREDIT_S`` is credited, so a crawler whose clock
        runs behind the scheduler's cannot shorten a delay by more than that."""
        if not event.fetched_at or event.fetched_at >= now:
            return now
        return max(event.fetched_at, now - RELEASE_CREDIT_S)

    def _backoff(self, failures: int) -> float:
        return min(self.cfg.frontier_failure_backoff_s * 2 ** (failures - 1), _MAX_HOST_SLOWDOWN_S)

    def _complete_page(
        self, event: PageEvent, publish_removals: Callable[[list[PageRemoval]], None] | None
    ) -> list[PageRemoval]:
        info = self.state.url_info(event.url)
        if info is None or info.state != "leased" or info.lease_id != event.lease_id:
            return []  # stale or repeated outcome
        now = self.clock()
        update, host_update = self._page_outcome(event, info, now)
        removals = self._follow_up(event, info, now)
        if removals and publish_removals is not None:
            publish_removals(removals)
        # The host's update and the release of its slot go with the outcome, atomically.
        if not self.state.finish(event.url, event.lease_id, update, host_update, self._fetch_ended(event, now)):
            return []  # another scheduler recorded it meanwhile
        if host_update.fail_streak == self.cfg.frontier_host_max_failures and host_update.blocked_until is None:
            self._give_up_host(event.host, event.error or f"http_{event.status}", now)
        if counts_as_error(event, update):
            self.state.bump("errors")
        cut = Counter(event.limits)
        if event.error in _ERROR_LIMITS:
            cut[_ERROR_LIMITS[event.error]] += 1
        self.count_limits(cut, event.host)
        return removals

    def _follow_up(self, event: PageEvent, info: UrlInfo, now: float) -> list[PageRemoval]:
        """Admit a redirect's target; the removals the outcome calls for."""
        if event.kind != "page":
            return []
        if event.redirect_to:
            # A redirect is a hop like a link: an endless redirect chain ends at max depth.
            self.offer_links(LinkBatch(source=event.url, depth=event.depth, links=[Outlink(event.redirect_to)]))
            return [PageRemoval(event.url, "redirected", now)]
        if event.status in _GONE and info.status in _GONE:
            return [PageRemoval(event.url, f"gone ({info.status}, then {event.status})", now)]
        return []

    def _page_outcome(self, event: PageEvent, info: UrlInfo, now: float) -> tuple[UrlUpdate, HostUpdate]:
        transient = event.status in (429, 503) or event.status >= 500 or (
            event.status == 0 and event.error not in _FINAL_ERRORS
        )
        if not transient:
            return self._done(event, info, now), HostUpdate(fail_streak=0, block_reason="")
        failures = info.fail_count + 1
        blocked = retry_after_until(event.retry_after, now)
        host = self.state.get_host(event.host)
        streak = (host.fail_streak if host else 0) + 1
        host_update = HostUpdate(fail_streak=streak, next_allowed_at=now + self._backoff(streak))
        if blocked is not None:
            host_update = HostUpdate(fail_streak=streak, blocked_until=blocked, block_reason=f"Retry-After ({event.status})")
        if failures >= self.cfg.frontier_max_fetch_failures or self._host_given_up(streak, blocked):
            interval = failure_interval(self.cfg, info.interval_s, info.note.startswith("failed"))
            note = f"failed: {event.error or f'http_{event.status}'}"
            failed = UrlUpdate(
                state="failed", due_at=now + interval, interval_s=interval, fail_count=failures, status=event.status, note=note
            )
            return failed, host_update
        due = blocked if blocked is not None else now + self._backoff(failures)
        return UrlUpdate(state="queued", due_at=due, fail_count=failures), host_update

    def _host_given_up(self, streak: int, blocked: float | None) -> bool:
        """A host that failed this many fetches in a row, without asking us to wait
        (Retry-After), is unreachable for this pass: a one-pass crawl must not back off
        on it for ever. Its URLs come back after the failure recrawl interval."""
        return blocked is None and streak >= self.cfg.frontier_host_max_failures

    def _give_up_host(self, host: str, reason: str, now: float) -> None:
        retry_at = now + self.cfg.frontier_failure_recrawl_s
        dropped = self.state.drop_queued(
            self.state.queued_urls(host), "failed", f"failed: host_unreachable:{reason}", due_at=retry_at
        )
        self.state.update_host(host, HostUpdate(block_reason=f"{_GIVEN_UP}{reason}"), now, release=False)
        self.state.bump("hosts_given_up")
        log.warning(
            "giving up on host %s for now: %d fetches in a row failed (%s); %d queued URL(s) marked failed, "
            "tried again in %.0f s", host, self.cfg.frontier_host_max_failures, reason, dropped,
            self.cfg.frontier_failure_recrawl_s,
        )  # fmt: skip

    def given_up_hosts(self) -> list[tuple[str, str]]:
        """(host, why) of every host this crawl gave up on and has not heard from since."""
        return [(h.host, h.block_reason.removeprefix(_GIVEN_UP)) for h in self.state.hosts(limit=-1)
                if h.block_reason.startswith(_GIVEN_UP)]

    def record_max_pages_cut(self) -> int:
        """When --max-pages ends a crawl with URLs still queued, those URLs were cut by
        that limit: counted as ``limit:max_pages`` (and per host), so that the report
        says so. Counted up to what is queued now, so a resumed run that stops on the
        same URLs adds nothing. Returns how many were newly counted."""
        if self.cfg.frontier_max_pages is None:
            return 0
        counts = self.counts()
        if counts.queued == 0 or counts.fetched < self.cfg.frontier_max_pages:
            return 0
        counters = self.state.counters()
        cut: dict[str, int] = {}
        for info in self.state.hosts(limit=-1):
            more = info.queued - counters.get(f"limit:max_pages@{info.host}", 0)
            if info.queued and more > 0:
                cut[info.host] = more
        for host, n in cut.items():
            self.count_limits(Counter({"max_pages": n}), host)
        return sum(cut.values())

    def _done(self, event: PageEvent, info: UrlInfo, now: float) -> UrlUpdate:
        """A response: schedule the recrawl by whether the content changed."""
        if event.status == 304:
            changed: bool | None = False
        elif info.content_hash and event.content_hash:
            changed = info.content_hash != event.content_hash
        elif not info.content_hash and not event.content_hash and info.status == event.status:
            # A 404, a 410 or a redirect again: an answer without content that has not
            # changed either, so its interval doubles too (before, every such URL came
            # back after the first hour for ever; Nutch sends gone pages to the longest).
            changed = False
        else:
            changed = None
        previous = None if info.note.startswith("failed") else info.interval_s
        interval = next_interval(self.cfg, previous, changed)
        not_modified = event.status == 304
        return UrlUpdate(
            state="done",
            due_at=now + interval,
            fetched_at=event.fetched_at or now,
            status=info.status if not_modified else event.status,
            content_hash=None if not_modified else (event.content_hash or None),
            etag=event.etag or None,
            last_modified=event.last_modified or None,
            interval_s=interval,
            fail_count=0,
            note=outcome_note(event),
        )

    def sweep_recrawl(self, limit: int = 10_000, shards: Collection[int] | None = None) -> int:
        """Queue every URL whose recrawl time has come (continuous crawling)."""
        return self.state.sweep_recrawl(self.clock(), limit, shards)

    # --- reporting --------------------------------------------------------------------

    def counts(self) -> FrontierCounts:
        return self.state.counts(self.clock())

    def finished(self) -> bool:
        """A one-pass crawl is over: nothing in flight and nothing more may be fetched."""
        counts = self.counts()
        if counts.leased:
            return False
        if counts.queued == 0:
            return True
        return self.cfg.frontier_max_pages is not None and counts.fetched >= self.cfg.frontier_max_pages

