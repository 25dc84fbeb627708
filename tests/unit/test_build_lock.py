"""Two processes building one site take turns: the second waits for the first's lock."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from services.cli.demo_site import build_lock


def _second(dest: str, log: str) -> None:
    with build_lock(Path(dest)):
        with open(log, "a") as out:
            out.write("second\n")


def test_a_second_builder_waits_for_the_first(tmp_path: Path) -> None:
    dest, log = tmp_path / "site", tmp_path / "log"
    ctx = multiprocessing.get_context("spawn")
    with build_lock(dest):
        other = ctx.Process(target=_second, args=(str(dest), str(log)))
        other.start()
        other.join(2)
        assert other.is_alive()  # blocked on the lock, not finished
        log.write_text("first\n")
    other.join(30)
    assert other.exitcode == 0
    assert log.read_text().splitlines() == ["first", "second"]
