"""Old code against new code, on the same pages, in the same run, in turns.

A change meant to make a page cheaper is measured here against the revision before
it: ``services/`` of that revision is exported with ``git archive`` into a temporary
directory, and each measurement runs in a fresh subprocess whose ``services`` package
is either that copy or this checkout, alternating round by round so that neither side
always runs on a quieter machine. Both sides use this checkout's ``bench/``.

    .venv/bin/python -m bench.ab_compare build --base HEAD~1      # build_document per page
    .venv/bin/python -m bench.ab_compare extract --base HEAD~1    # extract per page
    .venv/bin/python -m bench.ab_compare crawl --base HEAD~1      # a whole crawl's CPU per page

``build`` and ``extract`` time the demo site's pages (``bench/corpus.py``) repeated
``--copies`` times, with ``time.process_time`` (the CPU of the process), after one
untimed pass to warm caches; ``crawl`` is ``bench/crawl_profile.py``'s bare crawl.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

from bench import machine
from services.cli.demo_site import build_demo_site, default_cache

REPO = Path(__file__).resolve().parent.parent

# Runs in the child, with the side's tree first on sys.path: prints ms of CPU per page.
_CHILD = r"""
import json, sys, time
sys.path.append({repo!r})
from pathlib import Path
from bench.corpus import repeated, site_pages
from services.crawler.charset import decode_html
from services.crawler.extract import extract
from services.indexer.document_builder import build_document
import services
assert services.__file__.startswith({tree!r}), services.__file__
kind, site, copies = {kind!r}, Path({site!r}), {copies}
if kind == "build":
    items = repeated(site_pages(site), copies)
    work = build_document
else:
    ctype = "text/html; charset=utf-8"
    items = [("http://docs.bench.example.cn/" + p.relative_to(site).as_posix(), p.read_bytes())
             for p in sorted(site.rglob("*.html"))] * copies
    def work(item):
        text, encoding = decode_html(item[1], ctype)
        return extract(item[0], text, {{"Content-Type": ctype}}, encoding=encoding)
for item in items[: len(items) // copies]:
    work(item)  # warm: dictionaries, caches, lazy imports
started = time.process_time()
for item in items:
    work(item)
print(json.dumps({{"ms_per_page": (time.process_time() - started) * 1000 / len(items), "pages": len(items)}}))
"""


def export(rev: str, into: Path) -> Path:
    """``services/`` of ``rev``, unpacked under ``into``."""
    archive = into / "services.tar"
    subprocess.run(["git", "-C", str(REPO), "archive", "-o", str(archive), rev, "services"], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into, filter="data")
    return into


def in_process(kind: str, tree: Path, site: Path, copies: int) -> float:
    """ms of CPU per page of ``build`` or ``extract`` with ``tree``'s services."""
    code = _CHILD.format(repo=str(REPO), tree=str(tree), kind=kind, site=str(site), copies=copies)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TANSUO_")}
    out = subprocess.run([sys.executable, "-c", code], cwd=tree, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr[-2000:])
    return float(json.loads(out.stdout.strip().splitlines()[-1])["ms_per_page"])


def crawl(tree: Path, site: Path) -> float:
    """ms of CPU per page of a whole `tansuo crawl` with ``tree``'s services."""
    from bench.crawl_profile import measure
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
    parser.add_argument("kind", choices=("build", "extract", "crawl"))
    parser.add_argument("--base", default="HEAD~1", help="the old revision (default HEAD~1)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--copies", type=int, default=4, help="repeats of the demo site's pages (build, extract)")
    parser.add_argument("--site", type=Path, default=default_cache().parent / "zh-docs-site")
    args = parser.parse_args(argv)
    build_demo_site(args.site)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="tansuo-ab-") as tmp:
        base = export(args.base, Path(tmp))
        if args.kind == "crawl":
            times = compare(lambda tree: crawl(tree, args.site), base, args.rounds)
        else:
            times = compare(lambda tree: in_process(args.kind, tree, args.site, args.copies), base, args.rounds)
    old, new = statistics.median(times["old"]), statistics.median(times["new"])
    m = machine.describe()
    base_rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", args.base],
                              capture_output=True, text=True).stdout.strip()
    print(f"{args.kind}: old ({base_rev}) {old:.2f} ms/page, new ({m.commit}) {new:.2f} ms/page, "
          f"new/old {new / old:.3f} (medians of {args.rounds} rounds in turns: old {times['old']}, new {times['new']}); "
          f"{m.cpu}, {m.cores} cores, load average {load:.1f} -> {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
