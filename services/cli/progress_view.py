"""Live crawl progress on the terminal: fetched, queued, pages/s, errors."""

from __future__ import annotations

from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from services.cli.embedded_crawl import EmbeddedCrawl


class ProgressView:
    def __init__(self, enabled: bool = True) -> None:
        self.console = Console(stderr=True)
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
            disable=not enabled,
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

    def tick(self, crawl: EmbeddedCrawl) -> None:
        p = crawl.progress()
        self._progress.update(
            self._task,
            fetched=p.fetched,
            queued=p.queued,
            in_flight=p.in_flight,
            indexed=p.indexed,
            rate=crawl.pages_per_s(),
            errors=p.errors,
        )
