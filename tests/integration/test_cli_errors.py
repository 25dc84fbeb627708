"""Every error a user can cause on the command line ends in one line saying what to do,
never a traceback (issue 38): each `tansuo` command with bad arguments, a data
directory that cannot be used (a file, a place no one may write, an unreadable one)
and a port already taken, each in its own process, as a user runs it.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

from services.cli.data_dir import EXIT_DATA_DIR_BUSY
from tests.servers.net import free_port

pytestmark = pytest.mark.integration

# A place nobody may write, even root: sysfs is mounted read-only in containers and
# refuses new entries on a host. Checked by the fixture below.
UNWRITABLE = Path("/sys/tansuo-test-data")
READ_ONLY_DIR = Path("/sys")


SERVICES = frozenset({"scheduler", "crawler", "indexer", "ranker", "api"})


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    status: int = 2  # a user's mistake: exit 2, unless said otherwise
    says: str = ""  # a fragment the one line must hold
    env: tuple[tuple[str, str], ...] = ()


def _env(extra: tuple[tuple[str, str], ...]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TANSUO_", "PROMETHEUS_"))}
    # Any free port for a service's health server: another test may hold the default.
    env["TANSUO_HEALTH_PORT"] = "0"
    env.update(extra)
    return env


def run(case: Case, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "services.cli.main", *case.args], capture_output=True, text=True,
                          timeout=60, cwd=cwd, env=_env(case.env))  # fmt: skip


@pytest.fixture(scope="module")
def busy_port() -> Iterator[int]:
    """A port something else listens on."""
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))
        s.listen()
        yield port


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    try:
        UNWRITABLE.mkdir()
    except OSError:
        pass
    else:  # a machine where /sys is writable: nothing to test with
        UNWRITABLE.rmdir()
        pytest.skip("/sys is writable here")
    root = tmp_path_factory.mktemp("cli")
    a_file = root / "a-file"
    a_file.write_text("not a directory")
    empty = root / "empty"
    empty.mkdir()
    return {"file": a_file, "empty": empty, "cwd": root}


def cases(places: dict[str, Path], busy: int) -> list[Case]:
    f, empty = str(places["file"]), str(places["empty"])
    no_write, read_only = str(UNWRITABLE), str(READ_ONLY_DIR)
    site = "http://127.0.0.1:9/"
    busy_s = str(busy)
    return [
        # bad arguments (argparse, then our own checks)
        Case(("crawl",), says="required"),
        Case(("crawl", "http://exa mple.com/", "--data", empty), says="spaces"),
        Case(("crawl", "ftp://example.com/", "--data", empty), says="not an http(s) URL"),
        Case(("crawl", "http://example.com/", "--data", empty, "--max-pages", "-3"), says="bad option"),
        Case(("crawl", "http://example.com/", "--data", empty, "--delay", "soon"), says="invalid float"),
        Case(("crawl", "http://example.com/", "--data", empty, "--include", "("), says="frontier_include_patterns"),
        Case(("run", "http://example.com/", "--data", empty, "--port", "70000"), says="bad option"),
        Case(("search",), says="required"),
        Case(("search", "", "--data", empty), says="no index"),
        Case(("search", "x", "--data", empty, "--size", "0"), says="no index"),
        Case(("serve", "--data", empty), says="no index"),
        Case(("serve", "--data", empty, "--workers", "many"), says="invalid int"),
        Case(("seed", "--data", empty), says="required"),
        Case(("seed", "notaurl", "--data", empty), says="not an http(s) URL"),
        Case(("frontier", "--data", empty), says="no crawl"),
        Case(("report", "--data", empty), says="no crawl"),
        Case(("report", "--data", empty, "--hosts", "x"), says="invalid int"),
        Case(("demo", "--port", "x"), says="invalid int"),
        Case(("eval", "--data", empty), says="judgments file"),
        Case(("eval", "q.tsv", "--data", empty), says="no index"),
        Case(("eval", "q.tsv", "--url", "not a url", "--no-baselines"), says="error"),
        Case(("host", "pause", "--data", empty), says="required"),
        Case(("host", "explode", "x.cn", "--data", empty), says="invalid choice"),
        Case(("host", "pause", "nowhere.cn", "--data", empty), says="no crawl in"),
        Case(("force-merge", "--data", empty), says="no search index"),
        Case(("nonsense",), says="invalid choice"),
        Case(("--version",), status=0, says="tansuo "),
        Case(("scheduler",), says="TANSUO_STATE", env=(("TANSUO_STATE", "nosuch://x"),)),
        Case(("crawler",), says="TANSUO_BUS", env=(("TANSUO_BUS", "nosuch://x"),)),
        Case(("api", "--port", busy_s), says="in use"),
        Case(("serve", "--data", empty), status=2, says="TANSUO_LOG_FORMAT", env=(("TANSUO_LOG_FORMAT", "xml"),)),
        # data directories that cannot be used
        *[Case((cmd, site, "--data", f, "--allow-private-networks"), says="is a file") for cmd in ("crawl", "run")],
        *[Case((cmd, site, "--data", no_write, "--allow-private-networks"), says="cannot create")
          for cmd in ("crawl", "run")],
        Case(("crawl", site, "--data", read_only, "--allow-private-networks"), says="cannot write"),
        Case(("demo", "--data", no_write, "--no-serve"), says="cannot create"),
        Case(("demo", "--data", f), says="is a file"),
        *[Case((cmd, "--data", f), says="is a file") for cmd in ("serve", "frontier", "report", "force-merge", "api")],
        Case(("search", "x", "--data", f), says="is a file"),
        Case(("seed", site, "--data", no_write, "--allow-domain", "a.cn"), says="cannot create"),
        Case(("host", "pause", "a.cn", "--data", no_write), says="no crawl in"),
        Case(("host", "pause", "a.cn", "--data", read_only), says="cannot write"),
        Case(("force-merge", "--data", read_only), says="cannot write"),
        *[Case((cmd, "--data", no_write), says="cannot create") for cmd in ("scheduler", "crawler", "indexer", "ranker")],
        # ports already taken
        Case(("serve", "--data", read_only, "--port", busy_s), says="in use"),
        Case(("run", site, "--data", empty, "--port", busy_s, "--allow-private-networks"), says="in use"),
        Case(("demo", "--data", empty, "--port", busy_s), says="in use"),
        Case(("api", "--data", empty, "--port", str(free_port())), says="metrics port",
             env=(("TANSUO_HEALTH_PORT", busy_s),)),  # fmt: skip
    ]


def test_no_command_answers_a_users_mistake_with_a_traceback(places: dict[str, Path], busy_port: int) -> None:
    todo = cases(places, busy_port)
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda c: run(c, places["cwd"]), todo))
    problems = []
    for case, result in zip(todo, results, strict=True):
        err = result.stderr.strip()
        out = result.stdout.strip() if case.status == 0 else err
        why = []
        if "Traceback" in result.stderr or "Traceback" in result.stdout:
            why.append("a traceback")
        if result.returncode != case.status:
            why.append(f"exit {result.returncode}, not {case.status}")
        if case.says not in out:
            why.append(f"no {case.says!r}")
        lines = [line for line in err.splitlines() if line.strip() and not line.startswith("usage:")
                 and not line.startswith(" ")]  # argparse prints its usage above its one line  # fmt: skip
        if case.args[0] in SERVICES:  # a service logs its start and stop too: one line of error
            lines = [line for line in lines if line.startswith(f"tansuo {case.args[0]}: ")]
        if case.status != 0 and len(lines) != 1:
            why.append(f"{len(lines)} lines")
        if why:
            problems.append(f"tansuo {' '.join(case.args)}: {', '.join(why)}\n{err[-600:]}")
    assert not problems, "\n\n".join(problems)


def test_a_crawl_into_a_directory_another_crawl_holds_is_refused_before_any_request(
    places: dict[str, Path], tmp_path: Path
) -> None:
    """The lock alone: another process holds it (as `tansuo crawl` does for its life)."""
    data = tmp_path / "data"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from services.cli.data_dir import hold_crawl_lock; "
         "hold_crawl_lock(__import__('pathlib').Path(sys.argv[1]), 'tansuo crawl (test)'); print('held', flush=True); "
         "time.sleep(60)", str(data)],
        stdout=subprocess.PIPE, text=True, cwd=Path(__file__).parents[2],
    )  # fmt: skip
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        for extra in ((), ("--port", str(free_port()))):
            cmd = "run" if extra else "crawl"
            result = run(Case((cmd, "http://127.0.0.1:9/", "--data", str(data), "--allow-private-networks", *extra)),
                         places["cwd"])  # fmt: skip
            assert result.returncode == EXIT_DATA_DIR_BUSY, result.stderr
            assert f"pid {holder.pid}" in result.stderr and "Traceback" not in result.stderr
    finally:
        holder.kill()
        holder.wait()
    # Killed, its lock went with it (no stale lock file blocks the next crawl).
    from services.cli.data_dir import crawl_holder

    assert crawl_holder(data) is None
