"""Crawl progress while a crawl runs: fetched, queued, pages/s, errors, indexed.

On a terminal, a live line redrawn in place. Anywhere else (a file, a pipe, a
service's log, a CI job) a live line draws nothing until the end, so a plain line is
printed every ``log_every_s`` seconds instead. The figures are the crawl's own
(services/cli/embedded_crawl.py, CrawlProgress), the same as its last line and
`tansuo report`.
"""

from __future__ import annotations

import sys
import time
from datetime import timedelta

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from services.cli.embedded_crawl import CrawlProgress, EmbeddedCrawl


def progress_line(p: CrawlProgress, rate: float) -> str:
    """The plain progress line, as a log would keep it."""
    elapsed = timedelta(seconds=int(p.elapsed_s))
    return (f"crawling: fetched {p.fetched}, queued {p.queued}, in flight {p.in_flight}, indexed {p.indexed}, "
            f"{rate:.1f} pages/s, errors {p.errors}, {elapsed} elapsed")  # fmt: skip


class ProgressView:
    def __init__(self, enabled: bool = True, log_every_s: float = 10.0, console: Console | None = None) -> None:
        self.console = console or Console(stderr=True)
        live = enabled and self.console.is_terminal
        self._log_every_s = log_every_s if enabled and not live else 0.0
        self._next_log = time.monotonic() + self._log_every_s
        self._last = ""  # the latest line not printed yet
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]crawling[/]"),
            TextColumn("fetched [green]{task.fields[fetched]}[/]"),
            TextColumn("queued [cyan]{task.fields[queued]}[/]"),
            TextColumn("in flight {task.fields[in_flight]}"),
            TextColumn("indexed {task.fields[indexed]}"),
            TextColumn("[yellow]{task.fields[rate]:.1f}[/] pages/s"),
            TextColumn("errors [red]{task.fields[errors]}[/]"),
            TimeElapsedColumn(),
            console=self.console,
            disable=not live,
            transient=False,
        )
        self._task = self._progress.add_task(
            "crawl", total=None, fetched=0, queued=0, in_flight=0, indexed=0, rate=0.0, errors=0
        )

    def __enter__(self) -> ProgressView:
        self._progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._progress.stop()
        if self._last:  # a log ends on the crawl's last figures
            print(self._last, file=sys.stderr, flush=True)

    def tick(self, crawl: EmbeddedCrawl) -> None:
        p = crawl.progress()
        rate = crawl.pages_per_s()
        self._progress.update(
            self._task,
            fetched=p.fetched,
            queued=p.queued,
            in_flight=p.in_flight,
            indexed=p.indexed,
            rate=rate,
            errors=p.errors,
        )
        if not self._log_every_s:
            return
        self._last = progress_line(p, rate)
        if time.monotonic() >= self._next_log:
            self._next_log = time.monotonic() + self._log_every_s
            print(self._last, file=sys.stderr, flush=True)
            self._last = ""
