"""Pinyin and initials queries measured: the index's most frequent words, typed so.

For each of the ``--words`` multi-character Han words most pages hold (word tokens of
title, headings and body, as ``tansuo eval`` reads them), two queries: the word in
toneless pinyin run together (数据透视表 → shujutoushibiao) and in its initials
(sjtsb). A query succeeds when a page among its first ten results holds the word.

``--pairs N`` measures initials of two words in a row too: the N pairs of words of two
or three characters most pages hold side by side (segmented as two words, written
together: 自动 + 筛选), typed in the initials of the two (zdsx); found when a page among
the first ten holds the pair in a row.

    python -m bench.quality.pinyin_words --data DIR [--words 1000] [--pairs 300]
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path


def frequent_words(index, n: int) -> list[str]:
    from services.common.analysis.han import HAN_RUN
    from services.evaluation.corpus import iter_corpus

    df: Counter[str] = Counter()
    for doc in iter_corpus(index):
        df.update(w for w in set(doc.title_tokens + doc.body_tokens) if len(w) >= 2 and HAN_RUN.fullmatch(w))
    return [w for w, _ in df.most_common(n)]


def frequent_pairs(index, n: int) -> list[str]:
    """The ``n`` runs of two adjacent word tokens of two or three Han characters each that
    most pages hold as written (the two words side by side in the page's text)."""
    from services.common.analysis import fold
    from services.common.analysis.han import HAN_RUN
    from services.evaluation.corpus import iter_corpus

    df: Counter[str] = Counter()
    for doc in iter_corpus(index):
        text = fold(doc.text)
        found = set()
        for tokens in (doc.title_tokens, doc.body_tokens):
            for a, b in zip(tokens, tokens[1:], strict=False):
                if 2 <= len(a) <= 3 and 2 <= len(b) <= 3 and HAN_RUN.fullmatch(a + b) and a + b in text:
                    found.add(a + b)
        df.update(found)
    return [w for w, _ in df.most_common(n)]


def measure_pairs(data: Path, n: int) -> dict:
    from services.common.analysis import fold
    from services.common.analysis.pinyin_keys import initials_of
    from services.common.bootstrap import build_search_index
    from services.common.config import Settings
    from services.search.search_service import SearchService

    cfg = Settings(data_dir=data)
    index = build_search_index(cfg, read_only=True)
    service = SearchService(cfg, index)
    pairs = frequent_pairs(index, n)
    found, misses = 0, []
    for run in pairs:
        typed = initials_of(run)
        results = service.search(typed, size=10)["results"]
        if any(run in fold(r["title"] + " " + r["snippet"]) or _holds(index, r["url"], run) for r in results):
            found += 1
        else:
            misses.append(f"{run} ({typed})")
    return {"pairs": len(pairs), "pair_initials_top10": found / max(1, len(pairs)), "pair_misses": misses[:30]}


def measure(data: Path, n: int) -> dict:
    from services.common.analysis import fold
    from services.common.analysis.pinyin_keys import initials_of, pinyin_of
    from services.common.bootstrap import build_search_index
    from services.common.config import Settings
    from services.search.search_service import SearchService

    cfg = Settings(data_dir=data)
    index = build_search_index(cfg, read_only=True)
    service = SearchService(cfg, index)
    words = frequent_words(index, n)
    found = {"pinyin": 0, "initials": 0}
    misses: dict[str, list[str]] = {"pinyin": [], "initials": []}
    for w in words:
        for kind, typed in (("pinyin", pinyin_of(w)), ("initials", initials_of(w))):
            results = service.search(typed, size=10)["results"]
            if any(w in fold(r["title"] + " " + r["snippet"]) or _holds(index, r["url"], w) for r in results):
                found[kind] += 1
            else:
                misses[kind].append(f"{w} ({typed})")
    return {"pages": index.count(), "words": len(words),
            **{f"{k}_top10": v / len(words) for k, v in found.items()},
            "misses": {k: v[:20] for k, v in misses.items()}}  # fmt: skip


def _holds(index, url: str, word: str) -> bool:
    from services.common.analysis import fold

    doc = index.get(url)
    return doc is not None and word in fold(f"{doc.title}\n{doc.headings}\n{doc.body}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.quality.pinyin_words", description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--words", type=int, default=1000)
    parser.add_argument("--pairs", type=int, default=0, help="also measure initials of this many word pairs")
    args = parser.parse_args(argv)
    out = measure(args.data, args.words) if args.words else {}
    if args.pairs:
        out.update(measure_pairs(args.data, args.pairs))
    print(json.dumps(out, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
