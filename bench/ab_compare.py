"""Old code against new code, on the same pages, in the same run, in turns.

A change meant to make a page cheaper is measured here against the revision before
it: ``services/`` of that revision is exported with ``git archive`` into a temporary
directory (its C module compiled there), and each side runs in its own subprocess whose ``services`` package is
either that copy or this checkout. Both sides use this checkout's ``bench/``.
``build`` and ``extract`` keep one process per side and run every batch of ten pages
on both, back to back, alternating which goes first, so that the two sides share
whatever else the machine is doing; ``crawl`` alternates whole crawls.

    .venv/bin/python -m bench.ab_compare build --base HEAD~1      # build_document per page
    .venv/bin/python -m bench.ab_compare extract --base HEAD~1    # extract per page
    .venv/bin/python -m bench.ab_compare admit --base HEAD~1      # the frontier taking a page's links
    .venv/bin/python -m bench.ab_compare index --base HEAD~1      # the embedded indexer service per page
    .venv/bin/python -m bench.ab_compare crawl --base HEAD~1      # a whole crawl's CPU per page
    .venv/bin/python -m bench.ab_compare outputs --base HEAD~1    # same extracted pages and documents?

Medians and the fastest rounds are both reported: on a machine shared with other work
the fastest round of each side is the one least disturbed.

``build``, ``extract``, ``admit`` and ``index`` time the demo site's pages (``bench/sites/corpus.py``) repeated
``--copies`` times, with ``time.process_time`` (the CPU of the process, tantivy's
threads included), after one untimed pass to warm caches; ``index`` publishes each
page event to an embedded bus and runs one ``Indexer.step`` (a crawl's pace: a poll a
page), commits at the product's interval included; ``crawl`` is
``bench/crawl/crawl_profile.py``'s bare crawl.

``outputs`` times nothing: it runs ``extract`` and ``build_document`` of both sides over
every page of the demo, GIMP and LibreOffice sites (those already built) and reports
each page whose extracted content or document differs, field by field: a change made
for speed must leave them as they were.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench.measure import machine
from services.cli.demo_site import build_demo_site, default_cache

REPO = Path(__file__).resolve().parent.parent

# Runs in the child, with the side's tree first on sys.path. It reads batch numbers from
# stdin and answers each with the CPU ms that batch took, so that the parent can
# alternate the two sides every few dozen milliseconds: a burst of other work on the
# machine then falls on both sides alike.
_CHILD = r"""
import json, sys, time
sys.path.append({repo!r})
from pathlib import Path
from bench.sites.corpus import repeated, site_pages
from services.crawler.charset import decode_html
from services.crawler.extract import extract
from services.indexer.document_builder import build_document
import services
assert services.__file__.startswith({tree!r}), services.__file__
kind, site, copies, batch = {kind!r}, Path({site!r}), {copies}, {batch}
if kind == "build":
    items = repeated(site_pages(site), copies)
    work = build_document
elif kind == "admit":
    from services.common.adapters.sqlite.frontier import SqliteFrontierState
    from services.common.domain.messages import LinkBatch, PageEvent
    from services.common.config import Settings
    from services.scheduler.frontier import Frontier
    from services.scheduler.scope import Scope
    seed = "http://docs.bench.example.cn/"
    cfg = Settings(data_dir=Path("unused"), frontier_sitemaps=False)
    frontier = Frontier(cfg, SqliteFrontierState(Path(":memory:")), Scope.from_settings(cfg, [seed]))
    frontier.add_seeds([seed])
    (job,) = frontier.dispatch()  # the host's robots.txt: 300 rules, as a large site has
    robots = "User-agent: *\n" + "".join(f"Disallow: /private-{{i}}/\n" for i in range(300))
    frontier.complete(PageEvent(url=job.url, host=job.host, lease_id=job.lease_id, kind="robots", status=200,
                                robots_txt=robots))
    ctype = "text/html; charset=utf-8"
    items = []
    for p in sorted(site.rglob("*.html")):
        url = seed + p.relative_to(site).as_posix()
        text, encoding = decode_html(p.read_bytes(), ctype)
        items.append(LinkBatch(source=url, depth=0, links=extract(url, text, {{}}, encoding=encoding).links))
    items *= copies
    work = frontier.offer_links
elif kind == "index":
    import tempfile
    from services.common.adapters.sqlite.bus import SqliteBus
    from services.common.adapters.tantivy.search_index import TantivySearchIndex
    from services.common.config import Settings
    from services.common.domain.messages import TOPIC_PAGES
    from services.indexer.indexer import GROUP, Indexer
    workdir = Path(tempfile.mkdtemp(prefix="tansuo-ab-index-"))
    cfg = Settings(data_dir=workdir, indexer_search_idle_after_s=0)
    bus = SqliteBus(workdir / "bus.sqlite3")
    bus.subscribe(TOPIC_PAGES, GROUP)
    indexer = Indexer(cfg, bus, TantivySearchIndex(workdir / "index", cfg))
    items = repeated(site_pages(site), copies)
    def work(event):
        bus.publish(TOPIC_PAGES, event.to_bytes(), key=event.host)
        indexer.step(0.0)
else:
    ctype = "text/html; charset=utf-8"
    items = [("http://docs.bench.example.cn/" + p.relative_to(site).as_posix(), p.read_bytes())
             for p in sorted(site.rglob("*.html"))] * copies
    def work(item):
        text, encoding = decode_html(item[1], ctype)
        return extract(item[0], text, {{"Content-Type": ctype}}, encoding=encoding)
for item in items[: len(items) // copies]:
    work(item)  # warm: dictionaries, caches, lazy imports
print(json.dumps({{"batches": (len(items) + batch - 1) // batch}}), flush=True)
for line in sys.stdin:
    n = int(line)
    started = time.process_time()
    for item in items[n * batch : (n + 1) * batch]:
        work(item)
    print(json.dumps({{"ms": (time.process_time() - started) * 1000, "pages": len(items[n * batch : (n + 1) * batch])}}), flush=True)
"""


# Runs in a child, with the side's tree first on sys.path: one JSON line a page, the
# sha1 of each field of its extracted content and of its document.
_OUTPUTS_CHILD = r"""
import dataclasses, hashlib, json, sys
sys.path.append({repo!r})
from pathlib import Path
from services.common.domain.messages import PageEvent
from services.crawler.charset import decode_html
from services.crawler.extract import extract
from services.indexer.document_builder import build_document
import services
assert services.__file__.startswith({tree!r}), services.__file__
ctype = "text/html; charset=utf-8"
def digest(value):
    return hashlib.sha1(repr(value).encode("utf-8", "surrogatepass")).hexdigest()[:16]
for site in {sites!r}:
    for path in sorted(Path(site).rglob("*.html")):
        url = "http://docs.bench.example.cn/" + path.relative_to(site).as_posix()
        text, encoding = decode_html(path.read_bytes(), ctype)
        page = extract(url, text, {{"Content-Type": ctype}}, encoding=encoding)
        event = PageEvent(url=url, host="docs.bench.example.cn", lease_id="", status=200, content_type=ctype,
                          encoding=encoding, title=page.title, headings=page.headings, body=page.body,
                          content_hash=page.content_hash, canonical=page.canonical, link_page=page.own_text is not None,
                          own_text=page.own_text or "")
        doc = build_document(event)
        fields = {{"extract." + k: digest(v) for k, v in dataclasses.asdict(page).items()}}
        fields |= {{"document." + k: digest(v) for k, v in dataclasses.asdict(doc).items()}}
        print(json.dumps({{"page": str(path), "fields": fields}}), flush=True)
"""
OUTPUT_SITES = ("zh-docs-site", "zh-gimp-site", "libreoffice-help-site")


def same_outputs(base: Path, sites: list[Path]) -> int:
    """Pages whose extracted content or document differs between ``base`` and this
    checkout (printed, field by field); 0 when every page is the same."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
    lines = {}
    for name, tree in (("old", base), ("new", REPO)):
        code = _OUTPUTS_CHILD.format(repo=str(REPO), tree=str(tree), sites=[str(s) for s in sites])
        out = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, text=True, capture_output=True, check=True)
        lines[name] = [json.loads(line) for line in out.stdout.splitlines()]
    differing = 0
    for old, new in zip(lines["old"], lines["new"], strict=True):
        fields = sorted(k for k in old["fields"] if old["fields"][k] != new["fields"].get(k))
        if fields:
            differing += 1
            print(f"  differs: {old['page']}: {', '.join(fields)}", file=sys.stderr)
    print(f"outputs: {len(lines['new'])} pages of {len(sites)} sites, {differing} differ "
          f"({', '.join(s.name for s in sites)})")
    return differing


def export(rev: str, into: Path) -> Path:
    """``services/`` of ``rev``, unpacked under ``into``."""
    archive = into / "services.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), rev, "services"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    _build_native(into)
    return into


def _build_native(tree: Path) -> None:
    """Compile the revision's C module where it has one, with the compiler and flags
    Python was built with (what setup.py's build uses): an export holds the source
    only, and the old side would otherwise run its slower Python twins."""
    source = tree / "services" / "common" / "_native.c"
    if not source.exists():
        return
    target = source.with_name("_native" + sysconfig.get_config_var("EXT_SUFFIX"))
    flags = [*sysconfig.get_config_var("CC").split(), *sysconfig.get_config_var("CFLAGS").split(),
             *sysconfig.get_config_var("CCSHARED").split(), "-shared"]
    subprocess.run([*flags, f"-I{sysconfig.get_paths()['include']}", str(source), "-o", str(target)], check=True)


class _Side:
    """A child process holding one side's code, timing batches of pages on request."""

    def __init__(self, kind: str, tree: Path, site: Path, copies: int, batch: int) -> None:
        code = _CHILD.format(repo=str(REPO), tree=str(tree), kind=kind, site=str(site), copies=copies, batch=batch)
        env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
        self.proc = subprocess.Popen([sys.executable, "-c", code], cwd=tree, env=env, text=True,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.batches = int(self._answer()["batches"])

    def _answer(self) -> dict[str, float]:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the child exited ({self.proc.wait()})")
        return json.loads(line)

    def run(self, batch: int) -> tuple[float, int]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{batch}\n")
        self.proc.stdin.flush()
        answer = self._answer()
        return answer["ms"], int(answer["pages"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(60)


def in_process(kind: str, base: Path, site: Path, copies: int, rounds: int, batch: int = 10) -> dict[str, list[float]]:
    """ms of CPU per page of ``build`` or ``extract``, old and new, every batch of
    ``batch`` pages run by both sides back to back (which first alternates); one
    figure per side and round."""
    sides = {"old": _Side(kind, base, site, copies, batch), "new": _Side(kind, REPO, site, copies, batch)}
    times: dict[str, list[float]] = {"old": [], "new": []}
    try:
        for n in range(rounds):
            spent = {"old": 0.0, "new": 0.0}
            pages = 0
            for b in range(sides["old"].batches):
                order = ["old", "new"] if (n + b) % 2 == 0 else ["new", "old"]
                for name in order:
                    ms, pages_here = sides[name].run(b)
                    spent[name] += ms
                pages += pages_here
            for name in times:
                times[name].append(spent[name] / pages)
            print(f"  round {n + 1}: old {times['old'][-1]:.2f}, new {times['new'][-1]:.2f} ms/page",
                  file=sys.stderr, flush=True)
    finally:
        for side in sides.values():
            side.close()
    return times


def crawl(tree: Path, site: Path) -> float:
    """ms of CPU per page of a whole `tansuo crawl` with ``tree``'s services."""
    from bench.crawl.crawl_profile import measure
    from services.cli.static_site_server import SiteServer

    with SiteServer(site) as server:
        return measure(server, cwd=tree).cpu_ms_per_page


def compare(measure_side: Callable[[Path], float], base: Path, rounds: int) -> dict[str, list[float]]:
    sides = [("old", base), ("new", REPO)]
    times: dict[str, list[float]] = {"old": [], "new": []}
    for n in range(rounds):
        for name, tree in sides if n % 2 == 0 else sides[::-1]:
            times[name].append(measure_side(tree))
            print(f"  round {n + 1}, {name}: {times[name][-1]:.2f} ms/page", file=sys.stderr, flush=True)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.ab_compare", description=__doc__.splitlines()[0])
    parser.add_argument("kind", choices=("build", "extract", "admit", "index", "crawl", "outputs"))
    parser.add_argument("--base", default="HEAD~1", help="the old revision (default HEAD~1)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--copies", type=int, default=4, help="repeats of the demo site's pages (build, extract)")
    parser.add_argument("--site", type=Path, default=default_cache().parent / "zh-docs-site")
    args = parser.parse_args(argv)
    build_demo_site(args.site, documents=False)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tansuo-ab-") as tmp:
        base = export(args.base, Path(tmp))
        if args.kind == "outputs":
            sites = [p for p in (args.site.parent / name for name in OUTPUT_SITES) if p.is_dir()]
            return 1 if same_outputs(base, sites) else 0
        if args.kind == "crawl":
            times = compare(lambda tree: crawl(tree, args.site), base, args.rounds)
        else:
            times = in_process(args.kind, base, args.site, args.copies, args.rounds)
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    paired = statistics.median(n / o for o, n in zip(times["old"], times["new"], strict=True))
    m = machine.describe()
    base_rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.base],
                              capture_output=True, text=True).stdout.strip()
    print(f"{args.kind}: old ({base_rev}) {old:.2f} ms/page, new ({m.commit}) {new:.2f} ms/page, "
          f"new/old {new / old:.3f}, median of the rounds' ratios {paired:.3f}; fastest rounds {min(times['old']):.2f} and {min(times['new']):.2f}, "
          f"new/old {min(times['new']) / min(times['old']):.3f} (medians and minima of {args.rounds} rounds in turns: "
          f"old {[round(t, 2) for t in times['old']]}, new {[round(t, 2) for t in times['new']]}); "
          f"{m.cpu}, {m.cores} cores, load average {load:.1f} -> {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
