"""Small things the command line says and takes (issue 38)."""

from __future__ import annotations

import pytest

from services.cli import main
from services.cli.plurals import counted


def test_counts_are_singular_for_one() -> None:
    assert (counted(1, "result"), counted(0, "result"), counted(2, "result")) == ("1 result", "0 results", "2 results")
    assert counted(1, "worker process", "worker processes") == "1 worker process"
    assert counted(4, "worker process", "worker processes") == "4 worker processes"


@pytest.mark.parametrize("command", [["serve", "--data", "d"], ["api"]])
def test_serve_and_api_take_allow_private_networks(command: list[str]) -> None:
    # The console and POST /api/seeds of `tansuo serve` refused seeds on the network the
    # operator had just crawled, and serve had no flag to allow them.
    args = main._parser().parse_args([*command, "--allow-private-networks"])
    assert main._settings(args).crawler_allow_private_networks is True
    assert main._settings(main._parser().parse_args(command)).crawler_allow_private_networks is False


def test_version_is_printed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        main._parser().parse_args(["--version"])
    assert stop.value.code == 0 and capsys.readouterr().out.startswith("tansuo ")
