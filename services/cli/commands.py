"""What each `tansuo` subcommand does, given validated settings."""

from __future__ import annotations

import argparse
import html
import json
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from services.cli.api_servers import api_server
from services.cli.plurals import counted
from services.cli.stop_signals import restore_stop_signals
from services.common.bootstrap import Backends
from services.common.config import Settings

if TYPE_CHECKING:  # the crawl and the site server import Scrapy and more: only when used
    from services.cli.embedded_crawl import CrawlSummary, EmbeddedCrawl
    from services.cli.static_site_server import SiteServer
from services.common.errors import BadInput

EXIT_INTERRUPTED = 130
EXIT_SEEDS_UNREACHABLE = 1  # the crawl ran and reached none of its seeds
# From this many documents a crawl's index has segments enough for a merge to pay
# (docs/benchmarks.md, 'After `tansuo force-merge`').
MERGE_HINT_DOCUMENTS = 50_000
FIRST_COMMIT_POLL_S = 0.5  # how often `tansuo serve` looks for the index a running crawl has yet to commit


class CommandError(BadInput):
    """Bad input detected by a command: one clear line, exit status 2."""


def _check_seeds(cfg: Settings, seeds: list[str]) -> None:
    from services.scheduler.seed_submission import BadSeeds, seed_request

    try:
        seed_request(seeds, allow_private_networks=cfg.crawler_allow_private_networks)
    except BadSeeds as exc:
        raise CommandError(str(exc)) from None


def _crawl(cfg: Settings, seeds: list[str], progress: bool, continuous: bool = False) -> int:
    from services.cli.embedded_crawl import EmbeddedCrawl

    _check_seeds(cfg, seeds)
    return _run_crawl(EmbeddedCrawl(cfg, seeds, continuous=continuous), progress)


def _run_crawl(crawl: EmbeddedCrawl, progress: bool) -> int:
    """Crawl to the end with the progress line, print the summary; the exit status."""
    from services.cli.progress_view import ProgressView

    try:
        with ProgressView(enabled=progress, log_every_s=crawl.cfg.embedded_progress_log_interval_s) as view:
            summary = crawl.run(on_tick=view.tick)
            view.tick(crawl)
    finally:
        crawl.close()
    print_summary(summary, crawl.cfg.data_dir)
    if summary.finished and summary.seeds_unreachable:
        print(f"no seed could be fetched: check the URLs and that the sites answer "
              f"(tansuo report --data {crawl.cfg.data_dir} says why)", file=sys.stderr)  # fmt: skip
        return EXIT_SEEDS_UNREACHABLE
    return 0 if summary.finished else EXIT_INTERRUPTED


def print_summary(summary: CrawlSummary, data_dir: Path) -> None:
    """What the crawl did, the hosts it gave up on, and, for a large index, the merge
    that makes its searches cheaper (docs/serving.md, "Segments")."""
    p = summary.progress
    state = "finished" if summary.finished else "stopped (run the same command to resume)"
    print(
        f"crawl {state}: {p.fetched} pages fetched, {p.errors} errors, "
        f"{summary.documents} documents in the index, PageRank over {summary.pagerank_nodes} pages",
        file=sys.stderr,
    )
    if summary.given_up:
        shown = ", ".join(f"{host} ({why})" for host, why in summary.given_up[:10])
        more = f" and {len(summary.given_up) - 10} more" if len(summary.given_up) > 10 else ""
        print(f"gave up on {len(summary.given_up)} unreachable host(s): {shown}{more}", file=sys.stderr)
    if summary.finished and summary.documents >= MERGE_HINT_DOCUMENTS:
        print(f"searches get faster once the index is merged: tansuo force-merge --data {data_dir}", file=sys.stderr)


def crawl(backends: Backends, args: argparse.Namespace) -> int:
    cfg = backends.settings
    return _crawl(cfg, args.seeds, progress=not args.no_progress, continuous=args.continuous)


def frontier(backends: Backends, args: argparse.Namespace) -> int:
    cfg = backends.settings
    from services.scheduler.frontier_report import frontier_report

    if not cfg.state and not (cfg.data_dir / "frontier.sqlite3").exists():
        raise CommandError(f"no crawl in {cfg.data_dir}: run `tansuo crawl ... --data {cfg.data_dir}` first")
    report = frontier_report(backends.frontier, hosts=args.hosts)
    if args.json:
        print(json.dumps(report, ensure_ascii=False))
        return 0
    _print_frontier(report)
    return 0


def _print_frontier(report: dict) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(
        f"queued [bold]{report['queued']}[/] (due now {report['due_now']}), in flight {report['in_flight']}, "
        f"fetched {report['fetched']}, failed {report['failed']}, excluded {report['excluded']}, "
        f"hosts {report['hosts_total']}"
    )
    hosts = Table("host", "queued", "in flight", "delay s", "robots", "next fetch in s", title="hosts")
    for h in report["hosts"]:
        next_fetch = "paused" if h["paused"] else f"{h['next_fetch_in_s']:g}"
        hosts.add_row(h["host"], str(h["queued"]), str(h["in_flight"]), f"{h['delay_s']:g}", h["robots"], next_fetch)
    console.print(hosts)
    if report["blocked_hosts"]:
        blocked = Table("host", "blocked for s", "why", title="blocked hosts")
        for b in report["blocked_hosts"]:
            blocked.add_row(b["host"], f"{b['in_s']:.0f}", b["reason"])
        console.print(blocked)
    if report.get("limits"):
        limits = Table("limit", "times it cut something", title="crawl limits hit")
        for name, n in report["limits"].items():
            limits.add_row(name, str(n))
        console.print(limits)
    upcoming = Table("url", "state", "in s", title="next fetches and recrawls")
    for u in report["upcoming"]:
        upcoming.add_row(u["url"], u["state"], f"{u['in_s']:.0f}")
    console.print(upcoming)


def report(backends: Backends, args: argparse.Namespace) -> int:
    """`tansuo report`: per host, what was fetched, skipped and why."""
    cfg = backends.settings
    from services.scheduler.crawl_report import crawl_report

    if not cfg.state and not (cfg.data_dir / "frontier.sqlite3").exists():
        raise CommandError(f"no crawl in {cfg.data_dir}: run `tansuo crawl ... --data {cfg.data_dir}` first")
    from services.cli.report_view import print_report

    result = crawl_report(backends.frontier, backends.link_graph, _documents(backends))
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    print_report(result, args.hosts)
    return 0


def _documents(backends: Backends) -> int | None:
    """Documents in the index, if it can be read (an embedded one may not exist yet)."""
    cfg = backends.settings
    if not cfg.index and not (cfg.data_dir / "index").exists():
        return None
    return backends.index.count()


def seed(backends: Backends, args: argparse.Namespace) -> int:
    cfg = backends.settings
    from services.scheduler.seed_submission import BadSeeds, seed_request, submit

    try:
        request = seed_request(args.seeds, args.allow_domain, source="cli",
                               allow_private_networks=cfg.crawler_allow_private_networks)
    except BadSeeds as exc:
        raise CommandError(str(exc)) from None
    submit(backends.bus, request)
    where = cfg.bus or str(cfg.data_dir)
    print(f"sent {len(request.urls)} seed(s) to {where}; the scheduler adds them on its next poll", file=sys.stderr)
    return 0


def search(backends: Backends, args: argparse.Namespace) -> int:
    cfg = backends.settings
    from services.search.search_service import BadQuery, SearchService

    if not (cfg.data_dir / "index").exists():
        raise CommandError(f"no index in {cfg.data_dir}: run `tansuo crawl ... --data {cfg.data_dir}` first")
    try:
        result = SearchService(cfg, backends.index).search(
            args.query, page=args.page, size=args.size, site=args.site, sort=args.sort, as_typed=args.as_typed
        )
    except BadQuery as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    _print_results(result)
    return 0


def _print_results(result: dict) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    console.print(f"[bold]{counted(result['total'], 'result')}[/] for [bold]{escape(result['query'])}[/] "
                  f"({result['took_ms']} ms)")  # fmt: skip
    for line in _what_was_searched(result):
        console.print(escape(line))
    for n, hit in enumerate(result["results"], start=(result["page"] - 1) * result["size"] + 1):
        # The snippet is escaped HTML with <em> marks: back to text, marks kept for rich.
        snippet = escape(html.unescape(hit["snippet"].replace("<em>", "\x01").replace("</em>", "\x02")))
        snippet = snippet.replace("\x01", "[bold yellow]").replace("\x02", "[/]")
        console.print(f"\n[bold]{n}. {escape(hit['title'] or hit['url'])}[/]\n[green]{escape(hit['url'])}[/]\n{snippet}")


def _what_was_searched(result: dict) -> list[str]:
    """What the web UI says above the results: the correction shown or offered, the
    fallback to any word, the notes on the query."""
    lines = []
    correction = result.get("did_you_mean")
    if correction and correction.get("readings"):
        # Initials read as several words: each is what to search alone for its own pages.
        words = ", ".join(correction["readings"])
        if correction["shown"]:
            lines.append(f"showing results for the words it may spell: {words} (add --as-typed to search it as typed)")
        else:
            lines.append(f"it may spell: {words}")
    elif correction and correction["shown"]:
        lines.append(f"showing results for {correction['query']} (add --as-typed to search the query as typed)")
    elif correction:
        lines.append(f"did you mean: {correction['query']}")
    if result["total"] and not result["matched_all"]:
        lines.append("no page holds every word: pages with some of them")
    return lines + [f"note: {note}" for note in result["notes"]]


def serve(backends: Backends, args: argparse.Namespace) -> int:
    """Serve the index of ``--data`` with the production server (gunicorn, one worker
    process per core by default); each worker opens the index read-only, so a crawl in
    another process may go on writing and every worker sees its commits."""
    cfg = backends.settings
    _wait_for_first_commit(cfg.data_dir)
    cfg = _local_metrics(cfg)
    print(
        f"Tansuo search UI on http://{cfg.api_host}:{cfg.api_port}/  "
        f"({counted(api_server('ui_workers')(cfg), 'worker process', 'worker processes')}; Ctrl-C to stop)",
        file=sys.stderr,
    )
    return int(api_server("serve_ui")(cfg))


def _wait_for_first_commit(data_dir: Path) -> None:
    """Return once ``data_dir`` holds an index. A crawl that has not yet committed its
    first pages is waited for (serving beside a crawl is allowed); with no crawl
    running, a missing index is the user's mistake and said at once."""
    from services.cli.data_dir import crawl_holder

    said = False
    while not (data_dir / "index").exists():
        holder = crawl_holder(data_dir)
        if holder is None:
            raise CommandError(f"no index in {data_dir}: run `tansuo crawl ... --data {data_dir}` first")
        if not said:
            print(f"waiting for the first pages {holder} commits to {data_dir}", file=sys.stderr)
            said = True
        time.sleep(FIRST_COMMIT_POLL_S)


def _local_metrics(cfg: Settings) -> Settings:
    """One machine's commands keep /metrics on the UI's interface (127.0.0.1 unless
    told otherwise) rather than the services' all-interfaces default, which a pod
    needs and a laptop should not get unasked."""
    if "health_host" in cfg.model_fields_set:
        return cfg
    return cfg.model_copy(update={"health_host": cfg.api_host})


def run(backends: Backends, args: argparse.Namespace) -> int:
    """Crawl and serve at once: the UI answers from the first indexed page on."""
    cfg = backends.settings
    from services.cli.embedded_crawl import EmbeddedCrawl
    from services.common.runtime.http.metrics_port import serve_metrics_port

    _check_seeds(cfg, args.seeds)
    continuous = getattr(args, "continuous", False)  # `tansuo demo` has no such flag
    crawl = EmbeddedCrawl(cfg, args.seeds, continuous=continuous)
    try:
        index = crawl.readable_index()
        server = api_server("serve_in_process")(cfg, index)
    except BaseException:
        crawl.close()
        raise
    metrics_cfg = _local_metrics(cfg)
    metrics = serve_metrics_port(metrics_cfg.health_host, metrics_cfg.health_port, required=False)
    print(f"Tansuo search UI on http://{cfg.api_host}:{server.port}/  (Ctrl-C to stop)", file=sys.stderr)
    try:
        status = _run_crawl(crawl, progress=not args.no_progress)
        if status != 0:
            return status
        restore_stop_signals()  # Scrapy's handlers outlive its crawl
        print("crawl done; still serving (Ctrl-C to stop)", file=sys.stderr)
        threading.Event().wait()
    except KeyboardInterrupt:
        return 0
    finally:
        server.shutdown()
        if metrics is not None:
            metrics.close()
    return 0


def _start_demo_site(server_class: type[SiteServer], site_dir: Path, requested: int, remembered: Path) -> SiteServer:
    """The demo site on the port asked for, else on the port of the last run: a run
    stopped with Ctrl-C resumes with its frontier full of URLs on that port, which a
    new random port would leave unreachable (and the index with two copies)."""
    port = requested
    if not port and remembered.exists():
        try:
            port = int(remembered.read_text().strip())
        except ValueError:
            port = 0
    try:
        site = server_class(site_dir, host="127.0.0.1", port=port).start()
    except OSError:
        if requested:
            raise
        site = server_class(site_dir, host="127.0.0.1", port=0).start()  # taken: the crawl gives the old one up
    remembered.parent.mkdir(parents=True, exist_ok=True)
    remembered.write_text(str(site.port))
    return site


def demo(backends: Backends, args: argparse.Namespace) -> int:
    """Build Debian's Chinese manuals as a local site, serve it, crawl it, serve the UI."""
    cfg = backends.settings
    from services.cli.demo_site import build_demo_site
    from services.cli.static_site_server import SiteServer

    site_dir = cfg.data_dir / "site"
    pages = build_demo_site(site_dir)
    site = _start_demo_site(SiteServer, site_dir, args.site_port, cfg.data_dir / "site-port")
    print(f"demo site: {pages} pages of Debian's Chinese manuals at {site.url}", file=sys.stderr)
    demo_cfg = cfg.model_copy(
        update={"crawler_allow_private_networks": True, "frontier_host_delay_s": args.delay, "data_dir": cfg.data_dir / "crawl"}
    )
    try:
        if args.no_serve:
            return _crawl(demo_cfg, [site.url], progress=not args.no_progress)
        args.seeds = [site.url]
        return run(Backends(demo_cfg), args)
    finally:
        site.stop()
