"""Writes docs/benchmarks.md: how to run the benchmarks and read them, then one run's results."""

from __future__ import annotations

import statistics
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from bench.cluster.parity_report import BLOCK as PARITY_BLOCK
from bench.crawl.crawl_bench import Contender, CrawlCondition, CrawlRun
from bench.crawl.crawl_profile import extract_block
from bench.crawl.many_hosts_report import BLOCK as MANY_HOSTS_BLOCK
from bench.crawl.process_compare import BLOCK as PROCESSES_BLOCK
from bench.frontier.frontier_report import FrontierResults, render_frontier
from bench.frontier.redis_frontier_report import BLOCK as REDIS_FRONTIER_BLOCK
from bench.frontier.scheduler_scaling import BLOCK as SCHEDULERS_BLOCK
from bench.indexing.index_bench import IndexComparison, IndexRun
from bench.measure.machine import Machine
from bench.pagerank.pagerank_report import BLOCK as PAGERANK_BLOCK
from bench.scale.scale_report import BLOCK as SCALE_BLOCK
from bench.scale.scale_search import ScaleResults
from bench.serving import load_report
from bench.serving.search_bench import SearchComparison


@dataclass(frozen=True)
class BenchResults:
    quick: bool
    started: datetime  # UTC
    duration_s: float
    machine: Machine
    site_pages: int  # HTML pages of the demo site
    load: tuple[float, float]  # 1-minute load average at the start and at the end
    crawl: list[CrawlCondition]
    index: IndexComparison
    search: SearchComparison
    frontier: FrontierResults | None = None
    scale: ScaleResults | None = None


HEADER = """\
# Benchmarks

Tansuo's speed, each number measured side by side with a simple baseline **in the
same run, on the same machine, on the same data**, and reported as a ratio to it. An
absolute pages/s says more about the machine than about Tansuo, so no number here is
a pass or a fail: compare ratios between runs, and re-run on your machine before
comparing absolute figures with anything.

## Running them

```sh
.venv/bin/python -m bench.run           # the full run, about 25 minutes on 2 cores; rewrites this file
.venv/bin/python -m bench.run --quick   # a smoke run (about a minute) printed to stdout, this file untouched
.venv/bin/python -m bench.run --index   # section 2 alone (about 3 minutes), spliced into this file
.venv/bin/python -m bench.serving.load_bench --write --compare --profile /tmp/search.prof
                                        # the API under load (about 15 minutes): its own section, last
.venv/bin/python -m bench.cluster.cluster_parity --write
                                        # cluster and embedded mode on one site, a crawler killed
                                        # (about 30 minutes, needs the test install): its own section
.venv/bin/python -m bench.run --scale   # a million pages of the People's Daily and Tang and Song poems:
                                        # index docs/s, size, peak RSS, SearchService p50/p99 beside the
                                        # bare tantivy query, tansuo serve, at 100,000 and 1,000,000 pages
                                        # (hours on 2 cores, about 13 GB of disk in ~/.cache/tansuo;
                                        # bench.scale.scale_million --step build resumes a stopped build): its own section;
                                        # tansuo serve also under a 2 GB memory cgroup (root; --memory-limit),
                                        # then a copy of each index `tansuo force-merge`d and measured again
                                        # (--step merge, --step measure --merged; about 25 GB of disk more)
.venv/bin/python -m bench.crawl.process_compare --write --reading FILE
                                        # tansuo crawl in one process or two beside a plain Scrapy spider
                                        # (LibreOffice help site, about 5 minutes): its own section
.venv/bin/python -m bench.crawl.many_hosts --pages 20 --delay 1 4 --write
                                        # 128 loopback hosts against the politeness bound, embedded and
                                        # cluster (about 10 minutes, needs the test install): its own section
.venv/bin/python -m bench.frontier.redis_frontier_bench --write
                                        # the Redis frontier against SQLite (about 5 minutes, needs the
                                        # test install): its own section
.venv/bin/python -m bench.frontier.scheduler_scaling --write
                                        # one scheduler against two on many hosts (about 10 minutes,
                                        # needs the test install): its own section
.venv/bin/python -m bench.pagerank.pagerank_bench --write
                                        # PageRank at 10 million links (about 10 minutes, needs the test
                                        # install): its own section
.venv/bin/python -m bench.crawl.crawl_profile # where a crawl's CPU goes (py-spy, about 2 minutes): section 1b
.venv/bin/python -m bench.ab_compare build --base REV   # a change against revision REV, same pages, in turns
                                        # (also extract, admit, index, crawl, outputs); section 1b
.venv/bin/python -m bench.indexing.commit_cost --rounds 4    # what an index commit costs: tantivy alone per commit
                                        # size, the indexer per commit interval (about 6 minutes); section 1b
.venv/bin/python -m bench.indexing.cluster_freshness --write [--index-share 0.33]
                                        # fetch to searchable and the indexer's requests a page in a many-host
                                        # cluster crawl (about 2 minutes, needs the test install): its own section
```

[bench/README.md](../bench/README.md) lists the benchmarks by group.

Everything runs on 127.0.0.1. The site is the demo site (Debian's Chinese manuals,
built by `services.cli.demo_site.build_demo_site` from Debian packages and cached in
`~/.cache/tansuo/zh-docs-site`), served by `services.cli.static_site_server.SiteServer`.
`TANSUO_*` variables in the caller's environment are ignored, so every run measures the
defaults unless a row says otherwise. The code is in `bench/`; each module's docstring
says what it measures and how.

## What the numbers mean

1. **Crawl, pages/s**: pages fetched ÷ wall time of a whole `tansuo crawl URL --data DIR
   --delay 0 --allow-private-networks --no-progress` process, from spawn to exit. That
   process fetches, extracts, stores, indexes and ranks (PageRank) every page. The
   baseline is `bench/crawl/naive_crawler.py`: single-threaded `urllib` + `html.parser`,
   breadth-first over same-host links, each URL fetched once, nothing else done. Both
   run as subprocesses, in turns, and pages are counted by the site server (robots.txt
   and /sitemap.xml, which only Tansuo fetches, are not counted). Two site conditions:
   plain loopback (no latency: both are CPU-bound) and every response held back 50 ms
   (`bench/sites/slow_site.py`, standing in for a real network: here concurrency pays). With `--delay 0`, Tansuo
   fetches up to `TANSUO_FRONTIER_HOST_PARALLELISM` pages of one host at once (default 8);
   the 50 ms case also runs with 16. *Start-up* is spawn to first request, *fetching*
   first to last request, *wind-down* last request to exit (final indexing, PageRank).
2. **Index, docs/s**: the crawl's extracted pages (the demo site's HTML run through the
   crawler's own `decode_html` and `extract`, outside the timing), repeated under other
   host names until there are more than 2,000, each copy missing a different eighth of
   its lines so that copies are near-duplicates, not twins. Timed: Tansuo's
   `build_document` (jieba segmentation with search-mode sub-words, and whatever else
   the product computes per document, such as its near-duplicate signature) +
   `TantivySearchIndex.upsert` + `commit` per batch of `TANSUO_INDEXER_BATCH_SIZE` (1,000 since 2026-11-26, 200 before),
   + closing the writer (waiting for segment merges); the indexer service's duplicate
   checks are left out, as they would drop the copies. Baseline: SQLite FTS5
   (`bench/indexing/fts5_baseline.py`) given the same tokens by the same segmenter, upserting and
   committing the same batches. *Engine only* is the same run with the time spent
   building documents taken out: the two engines alone.
3. **Search latency**: 1,000 queries drawn with a fixed seed from the corpus (page titles,
   1–3 words of one page, words of two pages, Latin words), timed one by one through
   `SearchService.search(q, page=1, size=10)` on that tantivy index (opened read-only, as
   `tansuo serve` does): segmentation, BM25 over the fields, phrase boost, rank feature
   and highlighted snippets. Baseline: FTS5 `MATCH` on the same segmented words, the same
   all-words-then-any-word rule, `ORDER BY bm25()` with the same field weights, top 10
   with `snippet()`, plus a `count(*)` for the total the API also returns. The engines
   alternate query by query after 20 warm-up queries. p50/p99 are nearest-rank.

Ratios are always **Tansuo ÷ baseline**: above 1 means Tansuo is faster for pages/s
and docs/s, and *slower* for latencies.
"""


def render(results: BenchResults, crawl_profile: str = "") -> str:
    """``crawl_profile``: the block bench/crawl/crawl_profile.py's run left, put after the crawl."""
    parts = [HEADER, _results_heading(results), _machine(results.machine), _crawl(results)]
    if crawl_profile:
        parts.append(crawl_profile)
    parts += [render_index(results.index), _search(results.search)]
    if results.scale is not None:
        parts.append(scale(results.scale))
    if results.frontier is not None:
        parts.append(render_frontier(results.frontier))
    return "\n".join(parts).rstrip() + "\n"


def splice_section(path: Path, section: str) -> None:
    """Replace the section with ``section``'s heading in the report at ``path`` (or add
    it after section 3), leaving the rest of the report as it was measured."""
    text = path.read_text(encoding="utf-8")
    heading = section.split("\n", 1)[0].split(":")[0]
    lines = text.split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith(heading)), None)
    if start is None:
        start = next(i for i, line in enumerate(lines) if line.startswith("### Frontier"))
        end = start
    else:
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("### ")), len(lines))
    new = lines[:start] + section.rstrip("\n").split("\n") + [""] + lines[end:]
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(new), encoding="utf-8")
    tmp.replace(path)


def write(path: Path, results: BenchResults) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    # The blocks of the load, cluster parity, process, PageRank, many-host, Redis frontier,
    # scheduler and million-page benchmarks come from their own runs: kept; so is the crawl
    # profile's (section 1b), which render() puts back.
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    blocks = (load_report.extract(text), load_report.SLOW_BLOCK.extract(text), PARITY_BLOCK.extract(text), PROCESSES_BLOCK.extract(text),
              PAGERANK_BLOCK.extract(text), MANY_HOSTS_BLOCK.extract(text),
              REDIS_FRONTIER_BLOCK.extract(text), SCHEDULERS_BLOCK.extract(text), SCALE_BLOCK.extract(text))  # fmt: skip
    kept = "\n".join(block for block in blocks if block)
    tmp.write_text(render(results, extract_block(text)) + ("\n" + kept if kept else ""), encoding="utf-8")
    tmp.replace(path)  # a run that dies half-way leaves the previous results whole


def _results_heading(r: BenchResults) -> str:
    mode = "quick smoke run (1 round, small corpus): not for comparison" if r.quick else "full run"
    return (
        "## Results\n\n"
        f"{r.started:%Y-%m-%d %H:%M} UTC, {mode}, Tansuo `{r.machine.commit}`, "
        f"{r.duration_s / 60:.1f} minutes in all. Demo site: {r.site_pages} HTML pages. "
        f"Load average (1 min): {r.load[0]:.1f} at the start, {r.load[1]:.1f} at the end"
        + (" — other work shared the machine, so absolute times are noisy; the ratios, taken from runs in "
           "turns, much less so." if max(r.load) > 0.5 * r.machine.cores else ".")
        + "\n"
    )


def _machine(m: Machine) -> str:
    packages = ", ".join(f"{name} {version}" for name, version in m.packages.items())
    rows = [
        ("CPU", m.cpu),
        ("Cores", str(m.cores)),
        ("RAM", f"{m.ram_gib:g} GiB"),
        ("OS", f"{m.os}, Linux {m.kernel}"),
        ("Python", m.python),
        ("Packages", packages),
    ]
    return "### Machine\n\n" + _table(("", "Value"), rows)


def _crawl(r: BenchResults) -> str:
    out = ["### 1. Crawl: pages/s, Tansuo vs a naive urllib crawler\n"]
    rounds = len(r.crawl[0].baseline.runs) if r.crawl else 0
    out.append(f"Medians of {rounds} run{'s' if rounds != 1 else ''} per row, runs in turns.\n")
    rows = []
    for condition in r.crawl:
        latency = f"{condition.latency_ms} ms" if condition.latency_ms else "none (loopback)"
        for contender in [condition.baseline, *condition.contenders]:
            is_base = contender is condition.baseline
            rows.append((
                latency,
                contender.label,
                f"{contender.median(lambda x: x.pages):.0f}",
                f"{contender.median(lambda x: x.wall_s):.2f}",
                f"**{contender.median(lambda x: x.pages_per_s):.1f}**{_spread(contender)}",
                "1 (baseline)" if is_base else f"**{condition.ratio(contender):.2f}**",
                _phases(contender.runs),
            ))
    out.append(_table(("Added latency", "Crawler", "Pages", "Wall s", "Pages/s (range)", "Ratio",
                       "Start-up / fetching / wind-down s"), rows))
    if not all(c.same_urls for c in r.crawl):
        out.append("**Warning:** not every run fetched the same set of URLs; the page counts differ.\n")
    else:
        out.append("Every run of every crawler fetched the same set of URLs.\n")
    out.append(_crawl_reading(r.crawl))
    return "\n".join(out)


def _phases(runs: list[CrawlRun]) -> str:
    def med(metric: Callable[[CrawlRun], float]) -> float:
        return statistics.median(metric(x) for x in runs)

    start = med(lambda x: x.first_request_s)
    fetch = med(lambda x: x.last_request_s - x.first_request_s)
    wind = med(lambda x: x.wall_s - x.last_request_s)
    return f"{start:.2f} / {fetch:.2f} / {wind:.2f}"


def _spread(contender: Contender) -> str:
    rates = [r.pages_per_s for r in contender.runs]
    return f" ({min(rates):.1f}–{max(rates):.1f})" if len(rates) > 1 else ""


def _overlap(a: Contender, b: Contender) -> bool:
    """The pages/s of the two contenders' runs overlap: their difference is within the noise."""
    ra, rb = [r.pages_per_s for r in a.runs], [r.pages_per_s for r in b.runs]
    return min(ra) <= max(rb) and min(rb) <= max(ra)


def _fetch_window(contender: Contender) -> float:
    return contender.median(lambda x: x.last_request_s - x.first_request_s)


def _crawl_reading(conditions: list[CrawlCondition]) -> str:
    lines = ["Reading it:\n"]
    unloaded = next((c for c in conditions if c.latency_ms == 0 and c.contenders), None)
    for c in conditions:
        if not c.contenders:
            continue
        default = c.contenders[0]
        ratio = c.ratio(default)
        if c.latency_ms == 0:
            verdict = ("A ratio below 1 here is the price of that work, not a fault."
                       if ratio < 1 else "Even so, Tansuo keeps up with the baseline here.")
            lines.append(
                f"- **No latency ({ratio:.2f}×).** Both crawlers are CPU-bound here, and per page Tansuo does far "
                "more than the baseline: it fetches robots.txt and the sitemap, canonicalises and scopes every "
                "link, keeps its frontier and its message bus in SQLite (durably, so a killed crawl resumes), "
                "stores the raw page, extracts title, headings and main text with lxml, segments the text with "
                "jieba, indexes it in tantivy and computes PageRank, with the crawler, scheduler, indexer and "
                "ranker threads sharing two cores with the site server. It also pays a fixed start-up (Scrapy and "
                "Twisted imports) and wind-down (final index commit, PageRank) that the baseline does not have; "
                f"see the last column. {verdict}"
            )
            continue
        text = (f"- **{c.latency_ms} ms latency ({ratio:.2f}× with the default parallelism).** The baseline "
                "waits out every response one after another, while Tansuo keeps several requests to the host in "
                "flight, so the waits overlap each other and Tansuo's own per-page work.")
        for other in c.contenders[1:]:
            gain = c.ratio(other) / ratio if ratio else 0.0
            if len(other.runs) > 1 and _overlap(default, other):
                text += (f" {other.label} gives {c.ratio(other):.2f}×, but the pages/s of its runs and the "
                         "default's overlap: on this machine the difference is within run-to-run noise. What "
                         "limits Tansuo here is mostly its own per-page CPU work")
                if unloaded is not None:
                    text += (f": its fetching phase takes {_fetch_window(default):.1f} s with the default "
                             f"parallelism, and {_fetch_window(unloaded.contenders[0]):.1f} s with no latency at all")
                text += "."
            elif gain > 1.1:
                text += f" {other.label} raises it to {c.ratio(other):.2f}×: fetching was still the bottleneck."
            else:
                text += (f" {other.label} changes little ({c.ratio(other):.2f}×): the site's wait is no longer "
                         "what limits Tansuo, its per-page CPU work is")
                if unloaded is not None:
                    text += (f": its fetching phase takes {_fetch_window(default):.1f} s here, and "
                             f"{_fetch_window(unloaded.contenders[0]):.1f} s with no latency at all")
                text += "."
        lines.append(text)
    return "\n".join(lines) + "\n"


def render_index(c: IndexComparison) -> str:
    med = IndexComparison.median
    rows = []
    for label, runs in (("Tansuo (build_document + tantivy)", c.tansuo), ("SQLite FTS5, same tokens", c.fts5)):
        rows.append((
            label,
            f"{runs[0].docs}",
            f"{med(runs, lambda x: x.total_s):.2f}",
            f"{med(runs, lambda x: x.build_s):.2f}",
            f"{med(runs, lambda x: x.write_s):.2f}",
            f"{med(runs, lambda x: x.commit_s + x.close_s):.2f}",
            f"**{med(runs, lambda x: x.docs_per_s):.0f}**",
            f"{med(runs, _engine_docs_per_s):.0f}",
        ))
    build_t, build_b = med(c.tansuo, lambda x: x.build_s), med(c.fts5, lambda x: x.build_s)
    extra_ms = (build_t - build_b) / max(1, c.tansuo[0].docs) * 1000
    engine_base = med(c.fts5, _engine_docs_per_s)
    engine_ratio = med(c.tansuo, _engine_docs_per_s) / engine_base if engine_base else 0.0
    rounds = len(c.tansuo)
    return (
        "### 2. Indexing: docs/s, Tansuo vs SQLite FTS5\n\n"
        f"Medians of {rounds} run{'s' if rounds != 1 else ''} per row, runs in turns; times in seconds.\n\n"
        + _table(("Indexer", "Docs", "Total", "Building documents", "Writing", "Commit + close", "Docs/s",
                  "Docs/s, engine only"), rows)
        + f"\nRatio, docs/s: **{c.ratio:.2f}** in all, {engine_ratio:.2f} for the engines alone. Analysis is "
        "the same code on both sides (`analyze_as_text`: folding, words, sub-words and bigrams in one pass), so the "
        f"difference in *Building documents* ({build_t:.2f} s against {build_b:.2f} s, {extra_ms:+.2f} ms a "
        "document) is what `build_document` does besides: the MinHash near-duplicate signature (rensa's) and "
        "the bigram fields' text, which FTS5 does not index. The "
        "engine-only ratio compares tantivy (storing raw text and tokens, as the product needs for snippets "
        "and link-field updates) with FTS5 alone.\n" + _index_floor(c)
    )


def _index_floor(c: IndexComparison) -> str:
    """Issue 12's two indexing targets: building within 2x rjieba alone, 1,000 docs/s a core."""
    if not c.floor_s:
        return ""
    med = IndexComparison.median
    build_s, floor_s = med(c.tansuo, lambda x: x.build_s), statistics.median(c.floor_s)
    cpu_s = med(c.tansuo, lambda x: x.cpu_s)
    docs = c.tansuo[0].docs
    per_core = f"{docs / cpu_s:.0f}" if cpu_s > 0 else "n/a"
    return (
        f"\nAgainst issue 12's targets: building the documents took **{build_s / floor_s:.1f}x** the time of rjieba "
        f"alone cutting the same titles, headings and bodies ({build_s:.2f} s against {floor_s:.2f} s, medians of "
        f"the rounds; target 2x), and Tansuo indexed **{per_core} documents per CPU second** (documents ÷ the "
        f"process's CPU time over the run, tantivy's threads included, {cpu_s:.2f} s; target 1,000 a core).\n"
        + _cpu_floor(c, docs, cpu_s, floor_s)
    )


def _cpu_floor(c: IndexComparison, docs: int, cpu_s: float, rjieba_s: float) -> str:
    """What the 1,000 a core allows on this machine: rjieba's cut and tantivy's writing
    of the same documents, each alone, cost a document this much CPU whatever Tansuo does."""
    if not c.tantivy_floor_s or cpu_s <= 0:
        return ""
    tantivy_s = statistics.median(c.tantivy_floor_s)
    floor_s = rjieba_s + tantivy_s
    return (
        f"\nThe floor under that figure: rjieba's cut ({rjieba_s / docs * 1000:.2f} ms a document) and tantivy "
        f"alone writing the same documents, built beforehand, with the index's schema and writer "
        f"({tantivy_s / docs * 1000:.2f} ms of CPU a document, medians of the rounds) come to "
        f"**{docs / floor_s:.0f} documents per CPU second** on this machine. Tansuo's whole indexing reaches "
        f"**{floor_s / cpu_s:.2f}** of it; the rest ({(cpu_s - floor_s) / docs * 1000:.2f} ms a document) is "
        "Tansuo's own: folding, assembling the streams, the MinHash, converting documents for tantivy, the "
        "upsert's bookkeeping.\n" + _field_floor(c, docs, rjieba_s)
    )


def _field_floor(c: IndexComparison, docs: int, rjieba_s: float) -> str:
    """How much of tantivy's part the bigram fields are: the word fields alone, then
    with the bigram fields, each written alone (positions, nothing stored)."""
    if not c.field_floor_s:
        return ""
    ms = {name: statistics.median(r[name] for r in c.field_floor_s) / docs * 1000 for name in c.field_floor_s[0]}
    words, both = ms["words"], ms["words and bigrams"]
    rjieba_ms = rjieba_s / docs * 1000
    return (
        f"\nWhat that floor is made of: tantivy writing only the word fields of title, headings and body "
        f"(with positions, nothing stored) costs {words:.2f} ms of CPU a document; with the title and body bigram "
        f"fields too, {both:.2f} ms. With rjieba's cut, the word fields alone would allow "
        f"{1000 / (rjieba_ms + words):.0f} documents per CPU second and the words with their bigrams "
        f"**{1000 / (rjieba_ms + both):.0f}**, before any of Tansuo's own work: the bigram fields, which find any "
        "phrase of a page whatever the segmenter does, are most of the writing.\n"
    )


def _engine_docs_per_s(run: IndexRun) -> float:
    engine_s = run.total_s - run.build_s
    return run.docs / engine_s if engine_s > 0 else 0.0


def _search(s: SearchComparison) -> str:
    rows = []
    for label, stats in (("Tansuo SearchService (tantivy)", s.tansuo), ("SQLite FTS5 MATCH + bm25()", s.fts5)):
        rows.append((label, f"**{stats.p50:.2f}**", f"**{stats.p99:.2f}**", f"{stats.mean:.2f}",
                     f"{stats.with_results}/{s.queries}"))
    rows.append(("Ratio (Tansuo ÷ FTS5)", f"**{s.ratio(lambda x: x.p50):.2f}**", f"**{s.ratio(lambda x: x.p99):.2f}**",
                 f"{s.ratio(lambda x: x.mean):.2f}", ""))
    kind_rows = []
    for kind, count in s.kinds.items():
        t, f = s.tansuo.of_kind(kind), s.fts5.of_kind(kind)
        kind_rows.append((kind, str(count), f"{t.p50:.2f}", f"{f.p50:.2f}", f"{t.p99:.2f}", f"{f.p99:.2f}"))
    return (
        "### 3. Search latency: ms per query, Tansuo vs SQLite FTS5\n\n"
        f"{s.queries} queries on {s.docs} documents, size 10, page 1. Both engines counted the same number of "
        f"matching pages for {s.same_total} of the {s.queries} queries.\n\n"
        + _table(("Engine", "p50 ms", "p99 ms", "Mean ms", "Queries with results"), rows)
        + "\nBy kind of query:\n\n"
        + _table(("Query", "Count", "Tansuo p50", "FTS5 p50", "Tansuo p99", "FTS5 p99"), kind_rows)
        + "\nTansuo's time includes work the baseline skips: its phrase boost, the PageRank rescoring window "
        "(`TANSUO_SEARCH_RESCORE_WINDOW`, 500 hits) and snippets cut from the raw text rather than from tokens.\n"
    )


def scale(r: ScaleResults) -> str:
    """Section 3b: search on a large index, with and without the bigram fields."""
    mib = 1024 * 1024
    rows = []
    for label, stats, size in (
        ("Tansuo, words + bigrams", r.with_grams.tansuo, r.bytes_with_grams),
        ("Tansuo, words only (bigram fields empty, weights 0)", r.without_grams.tansuo, r.bytes_without_grams),
        ("SQLite FTS5, same word tokens", r.with_grams.fts5, r.bytes_fts5),
    ):
        rows.append((label, f"**{stats.p50:.2f}**", f"**{stats.p99:.2f}**", f"{stats.mean:.2f}",
                     f"{stats.with_results}/{r.with_grams.queries}", f"{size / mib:,.0f}"))
    base = r.without_grams.tansuo
    p99_cost = r.with_grams.tansuo.p99 / base.p99 if base.p99 else 0.0
    size_cost = r.bytes_with_grams / r.bytes_without_grams if r.bytes_without_grams else 0.0
    return (
        f"### 3b. Search at scale: {r.docs:,} documents, and what the bigram fields cost\n\n"
        f"{r.with_grams.queries} queries (the same as in 3), size 10, page 1, each engine in turn. The documents "
        "are the demo site's pages and their copies written again under other host names "
        "(`bench/scale/scale_search.py`).\n\n"
        + _table(("Index", "p50 ms", "p99 ms", "Mean ms", "Queries with results", "Size on disk, MiB"), rows)
        + f"\nThe bigram fields cost **{size_cost:.2f}×** the index size and **{p99_cost:.2f}×** the p99 "
        "latency of the words-only index on the same documents; FTS5 runs the query model of before "
        "(all words, then any word).\n"
    )


def _table(header: tuple[str, ...], rows: list[tuple[str, ...]]) -> str:
    def line(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |"

    return "\n".join([line(header), "|" + "---|" * len(header), *(line(row) for row in rows)]) + "\n"
