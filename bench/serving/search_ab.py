"""Search latency of old code against new code: one index, one query list, in turns.

``services/`` of the base revision is exported (``bench.ab_compare.export``) and each
side runs ``SearchService.search`` in its own child process over the same embedded
index, read-only. The parent sends the queries in batches of ten to both sides, back
to back, alternating which goes first, so that both share whatever else the machine
is doing; each query's wall time inside the child is the whole search path of
``GET /api/search`` without HTTP (parse, plan, the index, snippets, correction).

Queries: the million-page benchmark's draw (``bench.scale.scale_queries``: words,
questions, titles, quotes), each also typed with one wrong character (a same-pinyin
homophone, as ``tansuo eval --generate`` makes them) for a second mix, and the first
word of two to four characters of each typed in its pinyin initials (xz for 选择) for
a third, and the first two words in a row of two or three characters each, typed in
their initials (zdsx for 自动筛选), for a fourth.

    .venv/bin/python -m bench.serving.search_ab --data DIR [--base REV] [--queries 1000]
        [--mixes queries,typos,initials,pairs]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench.ab_compare import REPO, export

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.search.search_service import SearchService
cfg = Settings(data_dir=Path(sys.argv[2]), search_cache_entries=0)
service = SearchService(cfg, build_search_index(cfg, read_only=True))
queries = json.loads(sys.stdin.readline())
print("ready", flush=True)
for line in sys.stdin:
    times = []
    for i in json.loads(line):
        t = time.perf_counter()
        service.search(queries[i], size=10)
        times.append((time.perf_counter() - t) * 1000)
    print(json.dumps(times), flush=True)
"""


class _Side:
    def __init__(self, tree: Path, data: Path, queries: list[str]) -> None:
        self.proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tree), str(data)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, cwd=str(tree))  # fmt: skip
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(queries) + "\n")
        self.proc.stdin.flush()
        assert self.proc.stdout.readline().strip() == "ready"

    def run(self, batch: list[int]) -> list[float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(batch) + "\n")
        self.proc.stdin.flush()
        return json.loads(self.proc.stdout.readline())

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(30)


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * len(ordered) + 0.5) - 1))]


def draw(n: int) -> dict[str, list[str]]:
    """The million-page benchmark's queries, each with one wrong character, and the
    initials of the first word of 2-4 Han characters of each, by mix."""
    from bench.scale.scale_queries import draw as draw_scale
    from bench.sites.scale_corpus import load_corpus
    from services.common.analysis import segment
    from services.common.analysis.han import HAN_RUN
    from services.common.analysis.pinyin_keys import initials_of
    from services.evaluation.corpus import CorpusDoc
    from services.evaluation.generate_forgiving import Homophones, char_counts, with_one_typo

    corpus = load_corpus()
    plain = [q.text for q in draw_scale(corpus, n)]
    counts = char_counts([CorpusDoc("", "", " ".join(plain), "", (), (), 1.0)])
    homophones, rng = Homophones(counts), random.Random(36)
    typos = [t for q in plain if (t := with_one_typo(q, homophones, rng)) is not None]
    words = [next((w for w in segment(q) if 2 <= len(w) <= 4 and HAN_RUN.fullmatch(w)), "") for q in plain]
    initials = [initials_of(w) for w in words if w and len(initials_of(w)) == len(w)]
    pairs = [initials_of(p) for q in plain if (p := _first_pair(segment(q))) and len(initials_of(p)) == len(p)]
    return {"queries": plain, "typos": typos, "initials": initials, "pairs": pairs}


def _first_pair(words: list[str]) -> str:
    """The first two words in a row of two or three Han characters each, written together."""
    from services.common.analysis.han import HAN_RUN

    return next((a + b for a, b in zip(words, words[1:], strict=False)
                 if 2 <= len(a) <= 3 and 2 <= len(b) <= 3 and HAN_RUN.fullmatch(a + b)), "")  # fmt: skip


def measure(base: Path, data: Path, queries: list[str], passes: int = 2) -> dict[str, list[float]]:
    sides = {"base": _Side(base, data, queries), "new": _Side(REPO, data, queries)}
    times: dict[str, list[float]] = {"base": [], "new": []}
    try:
        for _ in range(passes):
            for k, start in enumerate(range(0, len(queries), 10)):
                batch = list(range(start, min(len(queries), start + 10)))
                order = ("base", "new") if k % 2 == 0 else ("new", "base")
                for name in order:
                    times[name].extend(sides[name].run(batch))
    finally:
        for side in sides.values():
            side.close()
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.serving.search_ab", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="data directory of an embedded index")
    parser.add_argument("--base", default="HEAD~1")
    parser.add_argument("--queries", type=int, default=1000)
    parser.add_argument("--passes", type=int, default=2)
    parser.add_argument("--mixes", default="queries,typos,initials", help="which query mixes to run, comma-separated")
    args = parser.parse_args(argv)
    mixes = draw(args.queries)
    unknown = set(args.mixes.split(",")) - set(mixes)
    if unknown:
        parser.error(f"--mixes: no mix {', '.join(sorted(unknown))}; there are {', '.join(mixes)}")
    with tempfile.TemporaryDirectory() as tmp:
        base = export(args.base, Path(tmp))
        out = {}
        for name in args.mixes.split(","):
            queries = mixes[name]
            times = measure(base, args.data, queries, args.passes)
            row = {side: {"p50": statistics.median(t), "p99": _percentile(t, 99), "n": len(t)} for side, t in times.items()}
            row["p99_ratio"] = row["new"]["p99"] / row["base"]["p99"]  # type: ignore[index]
            row["p50_ratio"] = row["new"]["p50"] / row["base"]["p50"]  # type: ignore[index]
            out[name] = row
            print(f"{name}: base p50 {row['base']['p50']:.2f} p99 {row['base']['p99']:.2f} ms; new p50 "
                  f"{row['new']['p50']:.2f} p99 {row['new']['p99']:.2f} ms; p99 x{row['p99_ratio']:.2f}, "
                  f"p50 x{row['p50_ratio']:.2f} ({len(queries)} queries x {args.passes} passes)", flush=True)  # fmt: skip
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
