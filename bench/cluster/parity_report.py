"""The cluster parity block of docs/benchmarks.md (``python -m bench.cluster.cluster_parity --write``):
issue 17's three "done when" figures, each with its pass mark, and what was run."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.crawl.repeated_fetches import Repeats
from bench.measure.marked_block import MarkedBlock
from bench.pagerank.link_field_watch import converged_after, unranked_at

if TYPE_CHECKING:
    from bench.cluster.cluster_parity import ParityResults

BLOCK = MarkedBlock("<!-- cluster-parity:start (bench/cluster/cluster_parity.py --write) -->", "<!-- cluster-parity:end -->")
MRR_GAP = 0.02


def _ranked_in_time(r: ParityResults) -> bool:
    after = converged_after(list(r.cluster.samples), r.embedded.docs)
    return after is not None and after <= r.limit_s


def _same_documents(r: ParityResults) -> bool:
    return not r.cluster.missing and not r.cluster.extra


def passed(r: ParityResults) -> bool:
    """Every pass mark of the issue met."""
    gap = abs(r.cluster.quality.mrr - r.embedded.quality.mrr)
    return _ranked_in_time(r) and _same_documents(r) and not r.cluster.fetches.unexplained and gap <= MRR_GAP


def _mark(ok: bool) -> str:
    return "**yes**" if ok else "**NO**"


def _repeats(f: Repeats) -> str:
    return (f"{f.requests:,} page requests for {f.pages:,} pages; {len(f.after_lease)} fetched again after a "
            f"killed crawler's lease, {len(f.unexplained)} fetched again otherwise")  # fmt: skip


def render(r: ParityResults) -> str:
    e, c = r.embedded, r.cluster
    after = converged_after(list(c.samples), e.docs)
    at_limit = unranked_at(list(c.samples), r.limit_s)
    first = c.samples[0]
    settings = ", ".join(f"`{k}={v}`" for k, v in sorted(c.settings.items())) or "none"
    gap = c.quality.mrr - e.quality.mrr
    lines = [
        "## Cluster and embedded mode on one site (issue 17)\n",
        f"{r.started:%Y-%m-%d %H:%M} UTC, Tansuo `{r.machine.commit}`, {r.duration_s / 60:.1f} minutes in all, "
        f"{r.machine.cores} cores ({r.machine.cpu}), {r.machine.ram_gib:g} GiB, Python {r.machine.python}. "
        f"Load average (1 min): {r.load[0]:.1f} at the start, {r.load[1]:.1f} at the end"
        + (" (other work shared the machine)." if max(r.load) > 0.5 * r.machine.cores else ".") + "\n",
        f"The LibreOffice help site ({r.site_pages:,} help pages, `bench/sites/libreoffice_help_site.py`) served once on "
        f"127.0.0.1, crawled by `tansuo crawl --delay {0.05}` and by the cluster (scheduler, two crawlers, indexer, "
        "ranker, each its own process, on Redis 7, Tansu, SeaweedFS and noida-db as in `tests/cluster.py`). "
        f"Crawler 0 was SIGKILLed after {c.fetched_at_kill:,} fetches, with {c.leased_at_kill} URLs in flight; "
        + ("a new crawler replaced it." if c.replaced else "crawler 1 finished the crawl alone.")
        + f" Cluster settings other than the product's defaults: {settings}.\n",
        "| | embedded | cluster | pass mark | met |",
        "|---|---|---|---|---|",
        f"| documents | {e.docs:,} | {c.docs:,} ({len(c.missing)} missing, {len(c.extra)} extra) | the same URLs "
        f"| {_mark(_same_documents(r))} |",
        f"| without PageRank when the frontier settled | {e.unranked} (at exit) | {first.unranked:,} of "
        f"{first.docs:,} indexed | | |",
        f"| without PageRank {r.limit_s:.0f} s later | | "
        + (f"{at_limit.unranked:,} of {at_limit.docs:,} indexed" if at_limit else "not sampled")
        + f" | 0 | {_mark(_ranked_in_time(r))} |",
        "| every page indexed and ranked | at exit | "
        + (f"{after:.0f} s after settling" if after is not None else f"not within {c.samples[-1].after_s:.0f} s")
        + " | | |",
        f"| page fetches | {_repeats(e.fetches)} | {_repeats(c.fetches)} | none fetched again but after a lease "
        f"| {_mark(not c.fetches.unexplained)} |",
        f"| known-item MRR@10 ({r.queries:,} queries) | {e.quality.mrr:.4f} | {c.quality.mrr:.4f} ({gap:+.4f}) "
        f"| within {MRR_GAP} | {_mark(abs(gap) <= MRR_GAP)} |",
        "",
        "MRR@10 by query type (queries, embedded, cluster): "
        + "; ".join(f"{t} {n}, {q:.4f}, {c.quality.by_type.get(t, (0, 0.0))[1]:.4f}"
                    for t, (n, q) in e.quality.by_type.items())  # fmt: skip
        + f". The query set is `tansuo eval --generate --seed 1 --sample-pages {r.sample_pages}` over the "
        "embedded index; both indexes are searched in-process by `tansuo eval`.\n",
        f"The cluster crawl took {c.crawl_s:.0f} s from seeding to the frontier settling, {c.settled_after_kill_s:.0f} s "
        "of it after the kill. Documents without PageRank after the settling, every few seconds (seconds: "
        "indexed/without): "
        + ", ".join(f"{s.after_s:.0f}: {s.docs}/{s.unranked}" for s in _thin(list(c.samples)))
        + ".\n",
    ]
    if c.fetches.unexplained:
        lines.append("Fetched again for no allowed reason: " + ", ".join(f"`{p}`" for p in c.fetches.unexplained[:10]) + "\n")
    if c.missing or c.extra:
        lines.append(f"Missing from the cluster: {list(c.missing[:5])}; only in the cluster: {list(c.extra[:5])}.\n")
    return "\n".join(lines)


def _thin(samples: list, keep: int = 16) -> list:
    """At most ``keep`` samples, first and last included, for a readable line."""
    if len(samples) <= keep:
        return samples
    step = (len(samples) - 1) / (keep - 1)
    return [samples[round(i * step)] for i in range(keep)]
