"""The PageRank benchmark's block of docs/benchmarks.md (``bench.pagerank.pagerank_bench``)."""

from __future__ import annotations

from typing import Any

from bench.measure.marked_block import MarkedBlock

BLOCK = MarkedBlock("<!-- pagerank-bench:start (bench/pagerank/pagerank_bench.py --write) -->", "<!-- pagerank-bench:end -->")
STAGES = (
    ("read", "read: Redis → id arrays, aliases resolved"),
    ("pagerank", "PageRank: CSR matrix and power iteration (scipy)"),
    ("anchors", "anchor fields: counted and ordered (numpy)"),
    ("write", "index writes: fields built, URLs looked up, bulk calls"),
)
MIB = 1024 * 1024


def render(r: dict[str, Any]) -> str:
    m = r["machine"]
    shared = " (other work shared the machine)." if max(r["load"]) > 0.5 * m.cores else "."
    return "\n".join([
        "## PageRank at 10 million links (issue 13)\n",
        f"{r['started']}, Tansuo `{m.commit}`, {r['minutes']:.1f} minutes in all, {m.cores} cores ({m.cpu}), "
        f"{m.ram_gib:g} GiB, Python {m.python}, scipy {m.packages.get('scipy', '?')}. Load average (1 min): "
        f"{r['load'][0]:.1f} at the start, {r['load'][1]:.1f} at the end{shared}\n",
        "`python -m bench.pagerank.pagerank_bench --write`. A synthetic graph (`bench/pagerank/pagerank_child.py`, seeded): ten "
        "links a page on average, power-law in-degrees (the k-th most linked page gets about k^-0.75 of the "
        "links), half the links carrying one of 5,000 anchor texts. Each side runs the real `Ranker.recompute` "
        "in a process of its own against Redis 7, once *cold* (nothing written yet: every page is written) and "
        "once *warm*, after a recrawl in which 1% of the pages gained one link. Index writes go to a counting "
        "index (calls and pages counted, nothing sent to tantivy or Elasticsearch: their bulk speed is their "
        "own); the write stage still builds every field, looks up its URL in Redis and segments its anchors.\n",
        _full(r["full"]),
        _side_by_side(r["small_old"], r["small_new"], r["base_rev"]),
        _solver(r["solver"], r["small_new"]["edges"]),
    ])


def _full(f: dict[str, Any]) -> str:
    cold, warm = f["cold"], f["warm"]
    rows = [f"| pages, links | {cold['nodes']:,}, {cold['edges']:,} | {warm['nodes']:,}, {warm['edges']:,} |"]
    for key, label in STAGES:
        rows.append(f"| {label} | {cold['stages'].get(key, 0):.1f} s | {warm['stages'].get(key, 0):.1f} s |")
    rows.append(f"| **total** | **{cold['seconds']:.1f} s** | **{warm['seconds']:.1f} s** |")
    rows.append(f"| power iterations | {cold['iterations']} | {warm['iterations']} |")
    rows.append(f"| pages written, in bulk calls | {cold['written']:,} in {cold['write_calls']} | "
                f"{warm['written']:,} in {warm['write_calls']} |")  # fmt: skip
    matrix = 12 * cold["edges"] + 4 * (cold["nodes"] + 1)
    grown = (f["peak_rss_kib"] - f["rss_before_kib"]) * 1024
    return "\n".join([
        f"### {cold['edges']:,} links, Redis → scipy → index writes\n",
        "| stage | cold run | warm run |",
        "|---|---|---|",
        *rows,
        "",
        f"Peak RSS of the ranking process: **{f['peak_rss_kib'] / 1024:,.0f} MiB**, "
        f"{f['rss_before_kib'] / 1024:,.0f} MiB of it before the first run (Python, numpy, scipy, the "
        f"segmenter's dictionary). The runs added {grown / MIB:,.0f} MiB, {grown / matrix:.1f} times the CSR matrix itself "
        f"({matrix / MIB:,.0f} MiB: 12 bytes a link, 4 a page). The graph took "
        f"{f['redis_bytes'] / MIB:,.0f} MiB of Redis (`MEMORY USAGE … SAMPLES 0` of its keys), "
        f"{f['redis_bytes'] / cold['edges']:.1f} bytes a link; it was written straight in the stored layout "
        f"(`bulk-load`, {f['load_s']:.0f} s), since ten million links through one script a page would take "
        "longer than everything else here: the per-page path is measured below.\n",
    ])


def _side_by_side(old: dict[str, Any], new: dict[str, Any], base_rev: str) -> str:
    def row(label: str, before: float, after: float, unit: str) -> str:
        return f"| {label} | {before:,.1f} {unit} | {after:,.1f} {unit} | {before / after:.1f}× |"

    edges = new["edges"]
    rows = [
        row("graph in Redis, bytes a link", old["redis_bytes"] / edges, new["redis_bytes"] / edges, "B"),
        row("loading, through `set_outlinks`", old["load_s"], new["load_s"], "s"),
        row("cold run", old["cold"]["seconds"], new["cold"]["seconds"], "s"),
        row("warm run", old["warm"]["seconds"], new["warm"]["seconds"], "s"),
        row("pages written by the warm run", old["warm"]["written"], new["warm"]["written"], "pages"),
        row("peak RSS of the ranking process", old["peak_rss_kib"] / 1024, new["peak_rss_kib"] / 1024, "MiB"),
        row("… added by the runs", (old["peak_rss_kib"] - old["rss_before_kib"]) / 1024,
            (new["peak_rss_kib"] - new["rss_before_kib"]) / 1024, "MiB"),  # fmt: skip
    ]
    stages = ", ".join(f"{key} {old['cold']['stages'].get(key, 0):.1f} s" for key, _ in STAGES if key in old["cold"]["stages"])
    return "\n".join([
        f"### Side by side at {edges:,} links: the code before ids (`{base_rev}`) and this revision\n",
        "The same graph, the same Redis, each side's own `RedisLinkGraph` and `Ranker`. Ratios are before ÷ "
        "after: above 1 means this revision is smaller or faster.\n",
        "| | before | this revision | ratio |",
        "|---|---|---|---|",
        *rows,
        "",
        f"Before, the cold run's stages: {stages} (its anchor texts were joined and segmented inside the "
        "loop that built every page's fields, for every page at every run). Before, a run rewrote every page "
        f"whose rank moved by more than 0.1%: {old['warm']['written']:,} pages after a recrawl of "
        f"{old['changed_pages']:,}; now {new['warm']['written']:,} (moved by more than 1%, or new anchors).\n",
    ])


def _solver(s: dict[str, float], edges: int) -> str:
    return "\n".join([
        f"### The solver alone, {edges:,} links: networkx against `pagerank_of_ids`\n",
        f"networkx `pagerank` (a `DiGraph` built from the same edges, then `tol=1e-6`): {s['networkx_s']:.1f} s; "
        f"`pagerank_of_ids` (CSR built from the id arrays, then iterated to an L1 error below 1e-6): "
        f"{s['ours_s']:.2f} s, **{s['networkx_s'] / s['ours_s']:.0f}× faster**. Largest difference of a score from "
        f"networkx's at `tol=1e-12`: {s['max_abs_diff']:.1e}.\n",
    ])
