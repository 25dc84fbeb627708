"""Known-item search quality of one index, through ``tansuo eval`` itself: the same
command a user runs, so the figure is the product's, not a re-implementation's.

Both modes are scored on one query set, generated from the embedded index: the
cluster index is meant to be the same, so a query set drawn from either one fits
both, and drawing it once keeps the two figures paired query by query.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Quality:
    queries: int
    mrr: float  # MRR@10 over every query
    by_type: dict[str, tuple[int, float]]  # type -> (queries, MRR@10)
    seconds: float


def _tansuo(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, "-m", "services.cli.main", *args], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"tansuo {' '.join(args[:2])} failed: {done.stderr[-2000:]}")
    return done


def embedded_env() -> dict[str, str]:
    """The caller's environment without TANSUO_ variables: embedded mode, defaults."""
    return {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}


def generate(data: Path, out: Path, sample_pages: int, seed: int = 1) -> int:
    """Write a known-item set for the embedded index in ``data``; returns its query count."""
    _tansuo("eval", "--data", str(data), "--generate", str(out), "--seed", str(seed),
            "--sample-pages", str(sample_pages), "--no-progress", env=embedded_env())  # fmt: skip
    return sum(1 for line in out.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#"))


def evaluate(judgments: Path, env: dict[str, str], data: Path | None, misses: Path) -> Quality:
    """Tansuo alone (no baselines) on ``judgments``: over the embedded index in ``data``,
    or over the index ``env``'s TANSUO_INDEX names when ``data`` is None."""
    where = ["--data", str(data)] if data is not None else []
    started = time.monotonic()
    done = _tansuo("eval", str(judgments), *where, "--no-baselines", "--json", "--no-progress",
                   "--misses", str(misses), env=env)  # fmt: skip
    figures = json.loads(done.stdout)["rankers"]["tansuo"]
    by_type = {t: (int(v["queries"]), float(v["mrr@10"])) for t, v in figures.items() if t != "overall"}
    overall = figures["overall"]
    return Quality(int(overall["queries"]), float(overall["mrr@10"]), by_type, time.monotonic() - started)
