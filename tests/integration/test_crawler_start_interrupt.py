"""Ctrl-C while Scrapy builds its engine ends the worker quietly: no Twisted "Unhandled
error in Deferred" traceback, which a user pressing Ctrl-C in the first second of the
demo used to get."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import scrapy.core.engine

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt  # as a SIGINT arriving while the engine is built

    scrapy.core.engine.ExecutionEngine.__init__ = interrupted

    from services.common.bootstrap import build_bus, build_page_store
    from services.common.config import Settings
    from services.crawler.worker import CrawlerWorker

    cfg = Settings(data_dir=Path(sys.argv[1]))
    CrawlerWorker(cfg, build_bus(cfg), build_page_store(cfg)).run()
    print("returned")
    """
)


def test_ctrl_c_while_the_engine_starts_ends_the_worker_without_a_traceback(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(tmp_path)], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("returned")
    assert "Unhandled error in Deferred" not in done.stderr
    assert "KeyboardInterrupt" not in done.stderr
