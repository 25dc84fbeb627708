"""`tansuo host pause|resume|recrawl|purge HOST`: an operator's per-host actions from the
shell, the same as the console's buttons and POST /api/hosts/{host}/ACTION.

Like `tansuo frontier` and `tansuo seed`, it acts on the frontier state (the data
directory's SQLite file, or Redis with TANSUO_STATE) and the bus directly, so it needs
no token and no server, and it reaches a crawl running in another process.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from services.common.bootstrap import Backends

_SAYS = {
    "pause": "paused {host}: no fetches until `tansuo host resume {host}`",
    "resume": "resumed {host}",
    "recrawl": "{n} URL(s) of {host} are due now{paused}",
    "purge": "sent {n} removal(s) of {host}'s pages to the indexer (applied by the running crawl, or the next "
    "one); {host} is paused",
}


def add_parser(sub: argparse._SubParsersAction) -> None:
    from services.scheduler.host_actions import ACTIONS

    p = sub.add_parser("host", help="pause, resume, recrawl now or purge one host of the crawl")
    p.add_argument("action", choices=ACTIONS)
    # Not `host`: that flag name is the server's listen address (api_host) in the settings.
    p.add_argument("target_host", metavar="HOST", help="as the frontier names it, e.g. www.example.cn or 127.0.0.1:8000")
    p.add_argument("--data", type=Path, default=Path("tansuo-data"),
                   help="data directory of an embedded crawl (ignored when TANSUO_STATE is set)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print exactly what the API answers")


def run(backends: Backends, args: argparse.Namespace) -> int:
    cfg = backends.settings
    from services.cli.commands import CommandError
    from services.scheduler.host_actions import UnknownHost, run_action

    if not cfg.state and not (cfg.data_dir / "frontier.sqlite3").exists():
        raise CommandError(f"no crawl in {cfg.data_dir}: run `tansuo crawl ... --data {cfg.data_dir}` first")
    try:
        result = run_action(backends.frontier, lambda: backends.bus, args.target_host, args.action)
    except UnknownHost:
        raise CommandError(f"the frontier knows no host {args.target_host!r} (see `tansuo frontier`)") from None
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
    else:
        paused = " (the host is paused: they wait for `tansuo host resume`)" if result.paused else ""
        print(_SAYS[result.action].format(host=result.host, n=result.urls, paused=paused), file=sys.stderr)
    return 0
