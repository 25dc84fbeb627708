"""Where the search path's time goes, old code beside new: ``SearchService.search`` of
each side over the same index, every query timed whole and split into stages.

Each side runs alone in a child process (``services/`` of the base exported as in
``bench.serving.search_ab``), so the totals are less comparable than search_ab's turns;
what this is for is the split. A stage's time is its own, its inner stages' taken
out, and a leaf stage (the index, term statistics, a plan) is named after the
innermost context it ran in (``index@spelling``: the spelling check's phrase counts),
so the second plan and the correction can be told from the first plan (what runs in
the answer outside any context counts as the first plan's: the base has no ``_find``).
A stage a side does not have is not timed there.

    .venv/bin/python -m bench.serving.search_stages_ab --data DIR [--base REV]
        [--queries 1000] [--mixes queries,typos,initials] [--tail 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.ab_compare import REPO, export
from bench.serving.search_ab import _percentile, draw

WARM_UP = 20

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.search import search_service
from services.search.search_service import SearchService
cfg = Settings(data_dir=Path(sys.argv[2]), search_cache_entries=0)
index = build_search_index(cfg, read_only=True)
service = SearchService(cfg, index)
now, stack, forgiving = {}, [], set()
CONTEXTS = {"first", "correction", "spelling", "pinyin", "run2", "results"}

def wrap(owner, name, stage, namer=None):
    inner = getattr(owner, name, None)
    if inner is None:
        return
    def timed(*args, **kwargs):
        label = namer(args, kwargs) if namer else stage
        if label not in CONTEXTS:
            # Outside every context, inside the answer: the first plan's (the base has no _find).
            context = next((s[0] for s in reversed(stack) if s[0] in CONTEXTS), "first" if stack else "")
            label = f"{label}@{context}" if context else label
        frame = [label, time.perf_counter(), 0.0]
        stack.append(frame)
        try:
            result = inner(*args, **kwargs)
        finally:
            stack.pop()
            spent = time.perf_counter() - frame[1]
            now[label] = now.get(label, 0.0) + spent - frame[2]
            if stack:
                stack[-1][2] += spent
        if name == "plan" and kwargs.get("forgiving"):
            forgiving.add(id(result))
        return result
    setattr(owner, name, timed)

wrap(service, "_answer", "answer")
wrap(service, "_find", "first", lambda a, k: "find" if any(s[0] == "correction" for s in stack) else "first")
wrap(service, "_run", "run", lambda a, k: "run2" if id(a[0]) in forgiving else "run")
wrap(service, "_corrected", "correction")
wrap(service, "_pinyin_like", "pinyin")
if hasattr(service, "_pinyin"):
    wrap(service._pinyin, "reading", "pinyin")
if hasattr(service, "_corrector"):
    wrap(service._corrector, "correct", "spelling")
wrap(service, "_result", "results")
wrap(service, "parse", "parse")
wrap(service._planner, "plan", "plan")
wrap(index, "term_stats", "term_stats")
wrap(index, "search", "index")
wrap(search_service, "fold_near_duplicates", "fold")
wrap(search_service, "paginate", "paginate")
queries = json.loads(sys.stdin.readline())
for q in queries[:WARM_UP]:
    service.search(q, size=10)
out = []
for q in queries:
    now.clear()
    t = time.perf_counter()
    service.search(q, size=10)
    out.append({"ms": (time.perf_counter() - t) * 1000, "stages": {k: v * 1000 for k, v in now.items()}})
print(json.dumps(out))
""".replace("WARM_UP", str(WARM_UP))


def run_side(tree: Path, data: Path, queries: list[str]) -> list[dict[str, Any]]:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(data)], input=json.dumps(queries) + "\n",
                          stdout=subprocess.PIPE, text=True, cwd=str(tree), check=True)  # fmt: skip
    rows: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return rows


def summary(rows: list[dict[str, Any]], tail: float) -> dict[str, Any]:
    """p50 / p99 of the whole, and each stage's mean ms over all queries and over the
    slowest ``tail`` percent."""
    totals = [float(r["ms"]) for r in rows]
    cut = _percentile(totals, 100 - tail)
    slow = [r for r in rows if float(r["ms"]) >= cut]
    names = sorted({k for r in rows for k in r["stages"]})

    def mean(some: list[dict[str, Any]], name: str) -> float:
        return sum(float(r["stages"].get(name, 0.0)) for r in some) / len(some)

    return {"p50": statistics.median(totals), "p99": _percentile(totals, 99), "n": len(rows), "tail_n": len(slow),
            "all": {n: mean(rows, n) for n in names}, "tail": {n: mean(slow, n) for n in names}}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serving.search_stages_ab",
                                     description=__doc__.splitlines()[0])  # fmt: skip
    parser.add_argument("--data", type=Path, required=True, help="data directory of an embedded index")
    parser.add_argument("--base", default="HEAD~1")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--mixes", default="queries,typos,initials", help="which query mixes to run, comma-separated")
    parser.add_argument("--tail", type=float, default=5.0, help="the slowest this many percent, split apart")
    args = parser.parse_args(argv)
    mixes = draw(args.queries)
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = export(args.base, Path(tmp))
        for mix in args.mixes.split(","):
            sides = {"base": summary(run_side(base, args.data, mixes[mix]), args.tail),
                     "new": summary(run_side(REPO, args.data, mixes[mix]), args.tail)}  # fmt: skip
            out[mix] = sides
            print(f"{mix}: base p50 {sides['base']['p50']:.2f} p99 {sides['base']['p99']:.2f}; "
                  f"new p50 {sides['new']['p50']:.2f} p99 {sides['new']['p99']:.2f} ms", flush=True)  # fmt: skip
            names = sorted(
                {*sides["base"]["all"], *sides["new"]["all"]}, key=lambda n: -sides["new"]["tail"].get(n, 0.0)
            )
            print(f"  {'stage':<26} {'base all':>9} {'new all':>9} {'base tail':>10} {'new tail':>10}  (mean ms)")
            for n in names:
                cells = [sides[s][part].get(n, 0.0) for part in ("all", "tail") for s in ("base", "new")]
                print(f"  {n:<26} {cells[0]:9.2f} {cells[1]:9.2f} {cells[2]:10.2f} {cells[3]:10.2f}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
