"""What each `tansuo` subcommand does, given validated settings."""

from __future__ import annotations

import argparse
import json
import re
import sys
import threading
from urllib.parse import urlsplit

from services.common.bootstrap import build_search_index
from services.common.settings import Settings

EXIT_INTERRUPTED = 130


class CommandError(Exception):
    """Bad input detected by a command: one clear line, exit status 2."""


def _check_seeds(cfg: Settings, seeds: list[str]) -> None:
    from services.crawler.network_guard import host_is_private

    for seed in seeds:
        parts = urlsplit(seed)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise CommandError(f"seed {seed!r} is not an http(s) URL")
        if not cfg.crawler_allow_private_networks and host_is_private(parts.hostname):
            raise CommandError(
                f"seed {seed} is on a loopback or private network address; "
                "pass --allow-private-networks to crawl local sites"
            )


def _crawl(cfg: Settings, seeds: list[str], progress: bool, index=None) -> int:  # noqa: ANN001
    from services.cli.embedded_crawl import EmbeddedCrawl
    from services.cli.progress_view import ProgressView

    _check_seeds(cfg, seeds)
    crawl = EmbeddedCrawl(cfg, seeds, index=index)
    with ProgressView(enabled=progress) as view:
        summary = crawl.run(on_tick=view.tick)
        view.tick(crawl)
    p = summary.progress
    state = "finished" if summary.finished else "stopped (run the same command to resume)"
    print(
        f"crawl {state}: {p.fetched} pages fetched, {p.errors} errors, "
        f"{summary.documents} documents in the index, PageRank over {summary.pagerank_nodes} pages",
        file=sys.stderr,
    )
    return 0 if summary.finished else EXIT_INTERRUPTED


def crawl(cfg: Settings, args: argparse.Namespace) -> int:
    return _crawl(cfg, args.seeds, progress=not args.no_progress)


def search(cfg: Settings, args: argparse.Namespace) -> int:
    from services.api.search_service import BadQuery, SearchService

    if not (cfg.data_dir / "index").exists():
        raise CommandError(f"no index in {cfg.data_dir}: run `tansuo crawl ... --data {cfg.data_dir}` first")
    index = build_search_index(cfg, read_only=True)
    try:
        result = SearchService(cfg, index).search(args.query, page=args.page, size=args.size, site=args.site)
    except BadQuery as exc:
        raise CommandError(str(exc)) from None
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
        return 0
    _print_results(result)
    return 0


def _plain(html: str) -> str:
    return re.sub(r"</?em>", "", html).replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace(
        "&#x27;", "'"
    ).replace("&amp;", "&")


def _print_results(result: dict) -> None:
    from rich.console import Console
    from rich.markup import escape

    console = Console()
    console.print(f"[bold]{result['total']}[/] results for [bold]{escape(result['query'])}[/] ({result['took_ms']} ms)")
    for n, hit in enumerate(result["results"], start=(result["page"] - 1) * result["size"] + 1):
        snippet = escape(_plain(hit["snippet"].replace("<em>", "\x01").replace("</em>", "\x02")))
        snippet = snippet.replace("\x01", "[bold yellow]").replace("\x02", "[/]")
        console.print(f"\n[bold]{n}. {escape(hit['title'] or hit['url'])}[/]\n[green]{escape(hit['url'])}[/]\n{snippet}")


def serve(cfg: Settings, args: argparse.Namespace) -> int:
    from services.api.app import create_app
    from services.api.main import serve as serve_app

    if not (cfg.data_dir / "index").exists():
        raise CommandError(f"no index in {cfg.data_dir}: run `tansuo crawl ... --data {cfg.data_dir}` first")
    app = create_app(cfg)
    server = serve_app(app, cfg.api_host, cfg.api_port)
    print(f"Tansuo search UI on http://{cfg.api_host}:{server.port}/  (Ctrl-C to stop)", file=sys.stderr)
    try:
        threading.Event().wait()
    finally:
        server.shutdown()
    return 0


def run(cfg: Settings, args: argparse.Namespace) -> int:
    """Crawl and serve at once: the UI answers from the first indexed page on."""
    from services.api.app import create_app
    from services.api.main import serve as serve_app

    _check_seeds(cfg, args.seeds)
    index = build_search_index(cfg)
    server = serve_app(create_app(cfg, index=index), cfg.api_host, cfg.api_port)
    print(f"Tansuo search UI on http://{cfg.api_host}:{server.port}/  (Ctrl-C to stop)", file=sys.stderr)
    try:
        status = _crawl(cfg, args.seeds, progress=not args.no_progress, index=index)
        if status != 0:
            return status
        print("crawl done; still serving (Ctrl-C to stop)", file=sys.stderr)
        threading.Event().wait()
    except KeyboardInterrupt:
        return 0
    finally:
        server.shutdown()
    return 0


def demo(cfg: Settings, args: argparse.Namespace) -> int:
    """Build Debian's Chinese manuals as a local site, serve it, crawl it, serve the UI."""
    from services.cli.demo_site import build_demo_site
    from services.cli.static_site_server import SiteServer

    site_dir = cfg.data_dir / "site"
    pages = build_demo_site(site_dir)
    site = SiteServer(site_dir, host="127.0.0.1", port=args.site_port)
    site.start()
    print(f"demo site: {pages} pages of Debian's Chinese manuals at {site.url}", file=sys.stderr)
    demo_cfg = cfg.model_copy(
        update={"crawler_allow_private_networks": True, "frontier_host_delay_s": args.delay, "data_dir": cfg.data_dir / "crawl"}
    )
    try:
        if args.no_serve:
            return _crawl(demo_cfg, [site.url], progress=not args.no_progress)
        args.seeds = [site.url]
        return run(demo_cfg, args)
    finally:
        site.stop()
