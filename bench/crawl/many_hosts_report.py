"""The many-host block of docs/benchmarks.md (``python -m bench.crawl.many_hosts --write``):
pages/s against the politeness bound, for embedded mode and 1, 2 and 4 crawlers."""

from __future__ import annotations

from typing import TYPE_CHECKING

from bench.measure.marked_block import MarkedBlock

if TYPE_CHECKING:
    from bench.crawl.many_hosts import CrawlRun, ManyHostResults

BLOCK = MarkedBlock("<!-- many-hosts:start (bench/crawl/many_hosts.py --write) -->", "<!-- many-hosts:end -->")
# Share of the machine's cores in use above which a run counts as waiting for CPU.
CPU_BOUND_SHARE = 0.85
POLITENESS_BOUND_SHARE = 0.9


def cores_busy(run: CrawlRun) -> float:
    """Cores kept busy over the run by the crawl, the test servers and the site server."""
    return (sum(run.cpu_s.values()) + run.servers_cpu_s + run.site_cpu_s) / run.wall_s if run.wall_s else 0.0


def machine_busy(run: CrawlRun) -> float:
    """Cores busy over the run with anything at all, other work on the machine included."""
    return run.machine_cpu_s / run.wall_s if run.wall_s else 0.0


def bound_by(run: CrawlRun, cores: int) -> str:
    """What held the run back, read off its figures."""
    if run.ratio >= POLITENESS_BOUND_SHARE:
        return "politeness"
    if machine_busy(run) >= CPU_BOUND_SHARE * cores:
        return "CPU" if cores_busy(run) >= CPU_BOUND_SHARE * cores else "CPU, shared with other work"
    return "the per-host round trip"


def _cpu(run: CrawlRun) -> str:
    if len(run.cpu_s) == 1:
        return f"{sum(run.cpu_s.values()):.1f}"
    parts = ", ".join(f"{role} {s:.1f}" for role, s in run.cpu_s.items())
    return f"{sum(run.cpu_s.values()):.1f} ({parts})"


def _speed_row(run: CrawlRun) -> str:
    log, s = run.log, run.shape
    return (f"| {s.delay_s:g} | {s.bound_per_s:g} | {run.mode} | {log.pages:,} | {log.window_s:.1f} "
            f"| {log.pages_per_s:.1f} | **{run.ratio:.2f}** | {run.wall_s:.1f} | {run.load:.1f} |")  # fmt: skip


def _work_row(run: CrawlRun, cores: int) -> str:
    log, shape = run.log, run.shape
    per_page = sum(run.cpu_s.values()) / log.pages * 1000 if log.pages else 0.0
    servers = f"{run.servers_cpu_s:.1f}" if run.servers_cpu_s else "–"
    polite = "yes" if log.polite(shape.delay_s) else "**NO**"
    return (f"| {shape.delay_s:g} | {run.mode} | {_cpu(run)} | {per_page:.1f} | {servers} | {run.site_cpu_s:.1f} "
            f"| {cores_busy(run):.2f} / {machine_busy(run):.2f} | {log.median_gap_s:.3f} | {log.min_gap_s:.3f} | {polite} "
            f"| {bound_by(run, cores)} |")  # fmt: skip


def _cycles(r: ManyHostResults) -> str:
    parts = []
    for run in r.runs:
        gap, shape = run.log.median_gap_s, run.shape
        reach = shape.hosts / gap if gap else 0.0
        parts.append(f"{run.mode}, delay {shape.delay_s:g} s: {gap:.2f} s ({gap - shape.delay_s:+.2f} s on the "
                     f"delay; at most {reach:.0f} pages/s)")  # fmt: skip
    return "; ".join(parts)


HEADING = "## Many hosts: pages/s against the politeness bound (issue 12)"


def render(r: ManyHostResults, heading: str = HEADING) -> str:
    s, m = r.shapes[0], r.machine
    delays = " and ".join(f"{shape.delay_s:g} s" for shape in r.shapes)
    bounds = "; ".join(f"{s.hosts} ÷ {shape.delay_s:g} = **{shape.bound_per_s:g} pages/s**" for shape in r.shapes)
    missing = sum(run.log.missing for run in r.runs)
    settings = ", ".join(f"`{k}={v}`" for k, v in sorted(r.cluster_settings.items())) or "none"
    lines = [
        heading + "\n",
        f"{r.started:%Y-%m-%d %H:%M} UTC, Tansuo `{m.commit}`, {r.duration_s / 60:.1f} minutes in all, "
        f"{m.cores} cores ({m.cpu}), {m.ram_gib:g} GiB, Python {m.python}. "
        f"Load average (1 min): {r.load[0]:.1f} at the start, {r.load[1]:.1f} at the end"
        + (" (other work shared the machine)." if max(r.load) > 0.5 * m.cores else ".") + "\n",
        f"{s.hosts} hosts (127.0.0.2 onwards, one port, one server process: `bench/sites/loopback_hosts.py`), each a "
        f"site of {s.pages_per_host} pages of the demo site's Chinese text whose front page lists them all, and every "
        f"page links to another host (`bench/sites/many_host_site.py`). Every front page is a seed. Per-host delay "
        f"{delays}, so the politeness bound is {bounds}. "
        "Embedded: `tansuo crawl <front pages> --delay D --allow-private-networks`, the product's "
        "defaults otherwise. Cluster: scheduler, indexer, ranker and the crawlers each their own process on Redis 7, "
        f"Tansu, SeaweedFS and noida-db (`tests/cluster.py`), with {settings}. "
        + ("Every page of every host was fetched in every run." if not missing else
           f"**{missing} pages were never fetched** (summed over the runs).") + "\n",
        "Pages/s is pages ÷ the fetch window, the span politeness bounds: the site servers' first page request "
        "to a delay after their last (each page holds its host for a delay); *wall* is spawn to exit for `tansuo crawl` (start-up, final indexing and PageRank "
        "included) and seeding to the frontier settling for the cluster (its indexer may still be behind).\n",
        "| delay s | bound, pages/s | run | pages | fetch window s | pages/s | ÷ bound | wall s | load at start |",
        "|---|---|---|---|---|---|---|---|---|",
        *(_speed_row(run) for run in r.runs),
        "",
        "CPU seconds over the wall time: the crawl's processes, the test servers (Redis, broker, S3, "
        "Elasticsearch API) and this benchmark's own process, which serves the sites; *cores busy* is those "
        "seconds ÷ the wall time, and the same for every process on the machine (`/proc/stat`), other "
        "sessions' work included. *Gaps* are between two "
        "requests to one host in the servers' logs (robots.txt and the sitemap probe included); *polite* means "
        "none was shorter than the delay.\n",
        "| delay s | run | CPU s, crawl | CPU ms/page | CPU s, test servers | CPU s, site server "
        "| cores busy, ours / machine "
        "| median gap s | shortest gap s | polite | held back by |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
        *(_work_row(run, m.cores) for run in r.runs),
        "",
        "What bounds these figures: the frontier lets a host with a delay have one fetch in flight and starts its "
        "clock again from the end of the response as the crawler saw it (up to 0.25 s before the scheduler records "
        "the outcome), so a host's cycle is the delay plus the fetch and whatever of the round trip (lease, bus, "
        "fetch, page event back, recorded) the credit does not cover, and robots.txt and the sitemap probe each "
        f"take a cycle of every host before its pages. Median cycle per host: {_cycles(r)}. *Held back by* reads each row: "
        f"politeness at {POLITENESS_BOUND_SHARE:.0%} of the bound or more, else CPU when "
        f"{CPU_BOUND_SHARE:.0%} of the {m.cores} cores or more were busy (\"shared with other work\" when the crawl's "
        "own share was below that), else the round trip.",
    ]
    return "\n".join(lines) + "\n"
