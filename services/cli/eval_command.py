"""`tansuo eval`: wiring of the evaluation package to the command line."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from services.common.bootstrap import Backends
from services.common.ports import SearchIndex

if TYPE_CHECKING:
    from services.evaluation.corpus import CorpusDoc
    from services.evaluation.judgments import Judgment

EPILOG = """\
judgments file (UTF-8, tab-separated, '#' starts a comment):
  type<TAB>query<TAB>relevant URL[<TAB>relevant URL ...]
  URLs are absolute, or site-relative (/faq/index.html) with --base-url.

examples:
  tansuo eval --data DIR --generate known-items.tsv      # write a query set for your site
  tansuo eval --data DIR known-items.tsv                 # Tansuo in-process + 3 baselines
  tansuo eval --url http://127.0.0.1:8080 --data DIR q.tsv   # a running API, baselines from DIR
"""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval",
        help="measure search quality on judged queries (MRR@10, nDCG@10, recall, P@1) beside baselines",
        description="Run judged queries against Tansuo and, on the same index and tokens, against BM25 "
        "(k1 2.0, b 0.75), TF-IDF cosine and PageRank + 0.5*title hits + 0.1*body hits; print "
        "MRR@10, nDCG@10, Recall@10, Recall@100 and P@1 per query type and overall. "
        "With --generate, write a known-item query set for the indexed site instead.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("judgments", nargs="?", type=Path, metavar="JUDGMENTS.tsv", help="judged queries to run")
    p.add_argument("--data", type=Path, metavar="DIR", help="data directory of an embedded index (searched in-process)")
    p.add_argument("--url", default="", metavar="URL", help="base URL of a running Tansuo API to search instead, e.g. http://127.0.0.1:8080")
    p.add_argument("--base-url", default="", metavar="URL", help="resolves site-relative URLs in the judgments")
    p.add_argument("--no-baselines", action="store_true", help="run Tansuo only")
    p.add_argument("--json", action="store_true", help="print the figures as JSON instead of a table")
    p.add_argument("--misses", type=Path, metavar="FILE", help="write Tansuo's misses (relevant URL not first) as TSV")
    p.add_argument("--generate", type=Path, metavar="OUT.tsv",
                   help="write a known-item query set (see --types) for the index and stop; - = stdout")
    p.add_argument("--seed", type=int, default=1, help="random seed of --generate (default 1)")
    p.add_argument("--types", default="", metavar="T,T",
                   help="--generate: the query types to write, comma-separated, or 'all' (default: title, title-words, "
                        "body-quote; also typo-title, typo-line, pinyin, regional, quoted, quoted-across)")
    p.add_argument("--sample-pages", type=int, default=0, metavar="N", help="--generate: sample N pages (default: all)")
    p.add_argument("--typed", choices=("words", "characters"), default="words",
                   help="--generate: how typo-title and typo-line are typed in simplified script: with the mainland's "
                        "words (软件 for 軟體, as pages are folded; default) or character by character as read (软体)")
    p.add_argument("--no-progress", action="store_true", help="no progress lines on stderr")


def run(backends: Backends, args: argparse.Namespace) -> int:
    from services.cli.commands import CommandError
    from services.evaluation.judgments import JudgmentsError
    from services.evaluation.targets import TargetError

    try:
        if args.generate is not None:
            return _generate(backends, args)
        return _evaluate(backends, args)
    except (JudgmentsError, TargetError) as exc:
        raise CommandError(str(exc)) from None


def _open_index(backends: Backends, args: argparse.Namespace, needed: bool) -> SearchIndex | None:
    """The index named by --data or TANSUO_INDEX, read-only; None when neither is given."""
    from services.cli.commands import CommandError

    cfg = backends.settings

    if args.data is None and not cfg.index:
        if needed:
            raise CommandError("give --data DIR (or set TANSUO_INDEX) so the index can be read")
        return None
    if not cfg.index and not (cfg.data_dir / "index").exists():
        raise CommandError(f"no index in {cfg.data_dir}: run `tansuo crawl ... --data {cfg.data_dir}` first")
    return backends.index


def _tick(n: int, total: int) -> None:
    print(f"\rreading the index: {n}/{total} documents", end="" if n < total else "\n", file=sys.stderr, flush=True)


def _load_corpus(index: SearchIndex, progress: bool) -> list[CorpusDoc]:
    from services.evaluation.corpus import load_corpus

    return load_corpus(index, on_progress=_tick if progress else None)


def _generate(backends: Backends, args: argparse.Namespace) -> int:
    from services.cli.commands import CommandError
    from services.evaluation.corpus import corpus_reader
    from services.evaluation.generate import ALL_TYPES, TYPES, generate
    from services.evaluation.judgments import format_judgments

    index = _open_index(backends, args, needed=True)
    assert index is not None  # needed=True raised otherwise
    pages = index.count()
    types = ALL_TYPES if args.types == "all" else tuple(t.strip() for t in args.types.split(",") if t.strip()) or TYPES
    unknown = sorted(set(types) - set(ALL_TYPES))
    if unknown:
        raise CommandError(f"--types: unknown {', '.join(unknown)}; known: {', '.join(ALL_TYPES)}, or all")
    # Passes over the index instead of a copy of it in memory.
    judgments = generate(corpus_reader(index, _tick if not args.no_progress else None), seed=args.seed,
                         max_pages=args.sample_pages, types=types, typed=args.typed)  # fmt: skip
    counts = {t: sum(1 for j in judgments if j.qtype == t) for t in dict.fromkeys(j.qtype for j in judgments)}
    typed = ", typos typed character by character" if args.typed == "characters" else ""
    header = [f"tansuo eval --generate: known-item queries, seed {args.seed}, {pages} indexed pages{typed}",
              "counts: " + ", ".join(f"{t} {n}" for t, n in counts.items())]
    text = format_judgments(judgments, header)
    if str(args.generate) == "-":
        sys.stdout.write(text)
    else:
        args.generate.parent.mkdir(parents=True, exist_ok=True)
        args.generate.write_text(text, encoding="utf-8")
        print(f"wrote {len(judgments)} queries ({header[1][8:]}) to {args.generate}", file=sys.stderr)
    return 0


def _evaluate(backends: Backends, args: argparse.Namespace) -> int:
    from services.cli.commands import CommandError
    from services.evaluation import report, targets
    from services.evaluation.judgments import read_judgments
    from services.evaluation.runner import evaluate

    if args.judgments is None:
        raise CommandError("give a judgments file (or --generate OUT.tsv to write one); see tansuo eval --help")
    cfg = backends.settings
    index = _open_index(backends, args, needed=not args.url)
    judgments = read_judgments(args.judgments, base_url=args.base_url)
    if args.url:
        rankers = {"tansuo": targets.over_http(args.url)}
    else:
        assert index is not None  # needed without --url: _open_index raised otherwise
        rankers = {"tansuo": targets.in_process(cfg, index)}
    if index is not None and not args.no_baselines:
        from services.evaluation.baselines import BaselineRankers

        docs = _load_corpus(index, progress=not args.no_progress)
        _warn_unindexed(judgments, {d.url for d in docs})
        rankers.update(BaselineRankers(docs).rankers())
    elif not args.no_baselines:
        print("no index to read (--data or TANSUO_INDEX): baselines skipped", file=sys.stderr)
    result = evaluate(judgments, rankers, progress=not args.no_progress)
    if args.misses is not None:
        args.misses.write_text(report.misses_tsv(result), encoding="utf-8")
    print(json.dumps(report.as_json(result), ensure_ascii=False) if args.json else report.markdown_table(result))
    return 0


def _warn_unindexed(judgments: Sequence[Judgment], indexed: set[str]) -> None:
    missing = sorted({u for j in judgments for u in j.relevant if u not in indexed})
    if missing:
        print(f"{len(missing)} relevant URL(s) are not in the index, e.g. {missing[0]}", file=sys.stderr)
