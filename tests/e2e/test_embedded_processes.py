"""`tansuo crawl` as two processes: the crawler's, and the index process it starts.

Ctrl-C reaches a terminal's whole process group, so the tests send SIGINT to the
group, as a terminal does; a SIGKILL reaches one process, so they kill the parent
alone and look for what it left behind. Processes are read from /proc.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import check_indexed_exactly_once, reachable_pages, serve_site
from .test_embedded_crawl import _index, _wait_for_done

pytestmark = pytest.mark.e2e
SPAWNED = "multiprocessing.spawn"  # in the index process's command line
GONE_WITHIN_S = 30.0  # a bound for a wait, not a measurement: exiting takes a second


def _crawl_cmd(url: str, data: Path) -> list[str]:
    return [sys.executable, "-m", "services.cli.main", "crawl", url, "--data", str(data),
            "--delay", "0.01", "--allow-private-networks", "--no-progress"]  # fmt: skip


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of a process, None once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    state, ppid = text.rsplit(")", 1)[1].split()[:2]
    return state, int(ppid)


def _running(pid: int) -> bool:
    stat = _stat(pid)
    return stat is not None and stat[0] != "Z"  # a zombie has exited; only its entry waits


def _children(pid: int) -> dict[int, str]:
    """Running children of ``pid``: their command lines by pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and (stat := _stat(int(entry.name))) and stat[1] == pid and stat[0] != "Z":
            try:
                found[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            except OSError:
                continue
    return found


def _index_process(parent: int) -> int:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        spawned = [pid for pid, cmd in _children(parent).items() if SPAWNED in cmd]
        if spawned:
            return spawned[0]
        time.sleep(0.05)
    raise AssertionError(f"no index process beside the crawl; children: {_children(parent)}")


def _wait_gone(pids: list[int]) -> list[int]:
    deadline = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < deadline and any(_running(p) for p in pids):
        time.sleep(0.1)
    return [p for p in pids if _running(p)]


def test_ctrl_c_stops_both_processes_indexes_what_was_fetched_and_the_next_run_resumes(site_copy, tmp_path):
    site = serve_site(site_copy)
    data = tmp_path / "data"
    cmd = _crawl_cmd(site.url, data)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)  # fmt: skip
    try:
        child = _index_process(proc.pid)
        _wait_for_done(data / "frontier.sqlite3", at_least=60, proc=proc)
        helpers = list(_children(proc.pid))
        assert _running(proc.pid) and _running(child)
        os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does
        _, stderr = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, stderr
    assert "run the same command to resume" in stderr
    assert not _wait_gone(helpers), f"left running after Ctrl-C: {helpers}"
    summary = next(line for line in stderr.splitlines() if line.startswith("crawl stopped"))
    documents = _index(data).count()
    assert documents > 0 and f"{documents} documents in the index" in summary

    result = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    check_indexed_exactly_once(site, _index(data).urls())
    site.server.stop()


def test_a_killed_parent_leaves_no_process_behind(site_copy, tmp_path):
    site = serve_site(site_copy)
    proc = subprocess.Popen(_crawl_cmd(site.url, tmp_path / "data"), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        _index_process(proc.pid)
        _wait_for_done(tmp_path / "data" / "frontier.sqlite3", at_least=20, proc=proc)
        helpers = list(_children(proc.pid))
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert not _wait_gone(helpers), f"orphans of a SIGKILLed crawl: {helpers}"
    site.server.stop()


def _committed_messages_left(bus: Path) -> tuple[int, int]:
    """(messages every group of their topic has committed, messages in all)."""
    with sqlite3.connect(f"file:{bus}?mode=ro", uri=True, timeout=30) as db:
        done = db.execute(
            "SELECT COUNT(*) FROM messages WHERE id <= "
            "(SELECT MIN(committed) FROM offsets WHERE offsets.topic = messages.topic)"
        ).fetchone()[0]
        total = db.execute("SELECT COUNT(*) FROM messages").fetchone()[0]
    return done, total


def test_a_continuous_crawl_keeps_its_message_log_compacted_while_it_runs(site_copy, tmp_path):
    # A continuous crawl never reaches the compaction at the end of a crawl: before the
    # periodic one, every page event stayed in bus.sqlite3 for as long as it ran.
    site = serve_site(site_copy)
    data = tmp_path / "data"
    env = {**os.environ, "TANSUO_EMBEDDED_BUS_COMPACT_INTERVAL_S": "0.5"}
    proc = subprocess.Popen([*_crawl_cmd(site.url, data), "--continuous"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=env, start_new_session=True)  # fmt: skip
    try:
        fetched = _wait_for_done(data / "frontier.sqlite3", len(reachable_pages(site)), proc)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            done, total = _committed_messages_left(data / "bus.sqlite3")
            if done == 0:
                break
            time.sleep(0.2)
        assert done == 0, f"{done} of {total} messages consumed by every group are still kept"
        assert total < fetched  # the log holds far fewer messages than the crawl published
    finally:
        os.killpg(proc.pid, signal.SIGINT)
        proc.wait(timeout=120)
