"""`tansuo`: the one command line for every deployment.

Command and flag names are a contract that outside tools rely on: add, never rename.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from services.common.runtime import multiprocess_metrics

# Before anything imports prometheus_client: the serving commands run several worker
# processes, whose metrics must be written where every worker's can be summed.
multiprocess_metrics.prepare(sys.argv[1:])

from pydantic import ValidationError

from services.cli import (
    commands,
    eval_command,
    host_command,
    merge_command,
    preflight,
    service_commands,
)
from services.cli.failure_lines import failure_line, version
from services.common.bootstrap import Backends
from services.common.config import Settings
from services.common.errors import BadInput
from services.common.runtime.json_logging import JsonFormatter
from services.common.runtime.log_throttle import RepeatThrottle
from services.common.runtime.private_files import keep_files_private

EXIT_BAD_INPUT = 2

# Long-running services of a cluster deployment, one per process.
SERVICE_COMMANDS = {
    "scheduler": (service_commands.scheduler, "run the scheduler service: frontier, politeness, fetch jobs"),
    "crawler": (service_commands.crawler, "run a crawler worker: fetch the jobs the scheduler hands out"),
    "indexer": (service_commands.indexer, "run the indexer service: page events into the search index"),
    "ranker": (service_commands.ranker, "run the ranker service: link graph, PageRank, anchor text"),
    "extractor": (service_commands.extractor, "run a document extractor: PDF, Office and WPS files into page events"),
    "api": (service_commands.api, "run the search API and web UI service (gunicorn)"),
}
LOG_FORMATS = ("text", "json")
# Commands that only read the index, so that they run beside a crawl writing it.
READ_ONLY_INDEX = frozenset({"search", "eval", "report"})
WORKERS_HELP = "server worker processes (TANSUO_API_WORKERS; default 0 = one per core)"
PRIVATE_SEEDS_HELP = ("accept seeds on loopback and private addresses in the console and POST /api/seeds "
                      "(an intranet; TANSUO_CRAWLER_ALLOW_PRIVATE_NETWORKS)")
# Client libraries that log every request at INFO and every internal retry with a
# traceback: the services log each backend failure once, in one line, themselves.
_CHATTY_LOGGERS = {"elastic_transport": logging.WARNING, "elastic_transport.transport": logging.ERROR,
                   "elastic_transport.node_pool": logging.ERROR, "urllib3": logging.WARNING}  # fmt: skip


class CliError(BadInput):
    """A user mistake: printed as one clear line, exit status 2."""


def _crawl_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("seeds", nargs="+", metavar="SEED_URL", help="where the crawl starts")
    p.add_argument("--data", required=True, type=Path, help="data directory (created if missing)")
    p.add_argument(
        "--allow-domain",
        action="append",
        default=[],
        metavar="D",
        help="crawl this host (example.cn) or host family (*.example.cn); default: the seeds' hosts",
    )
    p.add_argument("--include", action="append", default=[], metavar="REGEX", help="URLs must match one of these")
    p.add_argument("--exclude", action="append", default=[], metavar="REGEX", help="URLs matching any are skipped")
    p.add_argument("--max-pages", type=int, help="stop after fetching this many pages in all")
    p.add_argument("--max-depth", type=int,
                   help="links and redirects followed from a seed (seed = 0; default 20)")
    p.add_argument("--delay", type=float, help="minimum seconds between two requests to one host (default 1)")
    p.add_argument("--concurrency", type=int, help="parallel requests over all hosts (default 16)")
    p.add_argument(
        "--allow-private-networks",
        action="store_true",
        help="allow loopback, private and link-local addresses (local sites, tests)",
    )
    p.add_argument("--no-progress", action="store_true", help="no live progress bar")
    p.add_argument(
        "--continuous",
        action="store_true",
        help="keep crawling: recrawl pages when due instead of stopping when the frontier is empty",
    )


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tansuo", description="Tansuo (探索): search engine for Chinese-language sites")
    parser.add_argument("-v", "--verbose", action="store_true", help="log more")
    parser.add_argument("--version", action="version", version=f"tansuo {version()}")
    sub = parser.add_subparsers(dest="command", required=True)

    crawl = sub.add_parser("crawl", help="crawl, index and rank sites until the frontier is empty")
    _crawl_options(crawl)

    search = sub.add_parser("search", help="search the index")
    search.add_argument("query", metavar="QUERY")
    search.add_argument("--data", required=True, type=Path)
    search.add_argument("--site", default="", help="only results from this site (host)")
    search.add_argument("--size", type=int, default=10, help="results per page")
    search.add_argument("--page", type=int, default=1)
    search.add_argument("--sort", choices=("relevance", "date"), default="relevance",
                        help="relevance (default) or date: newest first")  # fmt: skip
    search.add_argument("--as-typed", action="store_true", help="search the query as typed, with no spelling correction")
    search.add_argument("--json", action="store_true", help="print exactly the API's JSON")

    serve = sub.add_parser("serve", help="serve the search API and web UI")
    serve.add_argument("--data", required=True, type=Path)
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8080)
    serve.add_argument("--workers", type=int, help=WORKERS_HELP)
    serve.add_argument("--allow-private-networks", action="store_true", help=PRIVATE_SEEDS_HELP)

    run = sub.add_parser("run", help="crawl and serve at once")
    _crawl_options(run)
    run.add_argument("--host", default="127.0.0.1")
    run.add_argument("--port", type=int, default=8080)

    seed = sub.add_parser("seed", help="send seeds to a running crawl (cluster, or a --continuous embedded crawl)")
    seed.add_argument("seeds", nargs="+", metavar="URL")
    seed.add_argument("--allow-domain", action="append", default=[], metavar="D",
                      help="add this domain to the crawl's scope (default: the seeds' hosts)")
    seed.add_argument("--data", type=Path, default=Path("tansuo-data"),
                      help="data directory of an embedded crawl (ignored when TANSUO_BUS is set)")

    frontier = sub.add_parser("frontier", help="what the crawl frontier holds: queues, hosts, blocks, next fetches")
    frontier.add_argument("--data", required=True, type=Path)
    frontier.add_argument("--hosts", type=int, default=20, help="hosts to list, busiest first")
    frontier.add_argument("--json", action="store_true", help="print exactly the API's /api/frontier JSON")

    report = sub.add_parser("report", help="what a crawl did and did not do, per host, and why")
    report.add_argument("--data", required=True, type=Path)
    report.add_argument("--hosts", type=int, default=50, help="hosts to list, most fetched first")
    report.add_argument("--json", action="store_true", help="print exactly the API's /api/report JSON (all hosts)")

    demo = sub.add_parser("demo", help="build Debian's Chinese manuals as a local site, crawl it, serve the UI")
    demo.add_argument("--data", type=Path, default=Path("tansuo-demo"))
    demo.add_argument("--host", default="127.0.0.1")
    demo.add_argument("--port", type=int, default=8080)
    demo.add_argument("--site-port", type=int, default=0, help="port of the demo site server (default: any)")
    demo.add_argument("--delay", type=float, default=0.0, help="politeness delay for the local site")
    demo.add_argument("--no-serve", action="store_true", help="stop after the crawl")
    demo.add_argument("--no-progress", action="store_true")

    eval_command.add_parser(sub)
    host_command.add_parser(sub)
    merge_command.add_parser(sub)

    for name, (_, summary) in SERVICE_COMMANDS.items():
        service = sub.add_parser(name, help=f"{summary}; backends from TANSUO_* variables")
        service.add_argument("--data", type=Path, help="data directory of the embedded backends (TANSUO_DATA_DIR)")
        if name == "api":
            service.add_argument("--host", help="address to listen on (TANSUO_API_HOST, default 127.0.0.1)")
            service.add_argument("--port", type=int, help="port to listen on (TANSUO_API_PORT, default 8080)")
            service.add_argument("--workers", type=int, help=WORKERS_HELP)
            service.add_argument("--allow-private-networks", action="store_true", help=PRIVATE_SEEDS_HELP)
    return parser


def _setup_logging(command: str, verbose: bool) -> None:
    """Text for people, or one JSON object per line (TANSUO_LOG_FORMAT=json) for a log
    collector. Services log at INFO: their start, stop and outages are the log."""
    log_format = os.environ.get("TANSUO_LOG_FORMAT", "text").strip().lower() or "text"
    if log_format not in LOG_FORMATS:
        raise CliError(f"TANSUO_LOG_FORMAT must be one of {', '.join(LOG_FORMATS)}, not {log_format!r}")
    level = logging.INFO if verbose or command in SERVICE_COMMANDS else logging.WARNING
    logging.basicConfig(level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for handler in logging.root.handlers:
        # Scrapy resets the root logger's level when it starts; a level on the handler holds.
        handler.setLevel(level)
        handler.addFilter(RepeatThrottle())
        if log_format == "json":
            handler.setFormatter(JsonFormatter(service=command))
    for name, chatty_level in _CHATTY_LOGGERS.items():
        logging.getLogger(name).setLevel(chatty_level)


def _settings(args: argparse.Namespace) -> Settings:
    """CLI flags override TANSUO_* variables, which override defaults."""
    overrides: dict[str, Any] = {}
    if getattr(args, "data", None) is not None:  # optional for services: TANSUO_DATA_DIR
        overrides["data_dir"] = args.data
    flag_to_field = {
        # `tansuo seed --allow-domain` widens a running crawl's scope; it is sent, not set.
        "allow_domain": "frontier_allow_domains" if args.command != "seed" else "",
        "include": "frontier_include_patterns",
        "exclude": "frontier_exclude_patterns",
        "max_pages": "frontier_max_pages",
        "max_depth": "frontier_max_depth",
        "delay": "frontier_host_delay_s",
        "concurrency": "crawler_concurrency",
        "host": "api_host",
        "port": "api_port",
        "workers": "api_workers",
    }
    for flag, field in flag_to_field.items():
        value = getattr(args, flag, None)
        if field and value not in (None, []):
            overrides[field] = tuple(value) if isinstance(value, list) else value
    if getattr(args, "allow_private_networks", False):
        overrides["crawler_allow_private_networks"] = True
    try:
        return Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg'].removeprefix('Value error, ')}" for e in exc.errors())
        raise CliError(f"bad option: {problems}") from None


def main(argv: Sequence[str] | None = None) -> int:
    keep_files_private()  # before anything is written: the data directory is the user's alone
    args = _parser().parse_args(argv)
    handlers = {
        "crawl": commands.crawl,
        "run": commands.run,
        "search": commands.search,
        "serve": commands.serve,
        "demo": commands.demo,
        "frontier": commands.frontier,
        "report": commands.report,
        "seed": commands.seed,
        "eval": eval_command.run,
        "host": host_command.run,
        "force-merge": merge_command.run,
        **{name: handler for name, (handler, _) in SERVICE_COMMANDS.items()},
    }
    try:
        _setup_logging(args.command, args.verbose)
        settings = _settings(args)
        preflight.check(args.command, args, settings)
        if args.command == "serve":
            preflight.print_note(preflight.crawl_note(settings))
        backends = Backends(settings, read_only_index=args.command in READ_ONLY_INDEX)
        try:
            return handlers[args.command](backends, args)
        finally:
            backends.close()
    except (BadInput, ValueError) as exc:
        print(f"tansuo {args.command}: error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_status", EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # no traceback reaches a user: one line, the traceback with -v
        line, status = failure_line(exc, args.verbose)
        print(f"tansuo {args.command}: error: {line}", file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())

