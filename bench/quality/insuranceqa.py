"""InsuranceQA (Chinese) as a crawlable site with judged questions, for `tansuo eval`.

Issue 15 asks that Tansuo rank real questions at least as well as plain BM25. The
InsuranceQA corpus (PyPI ``insuranceqa-data==1.0``: 27,413 answers, 2,000 test
questions with the ids of their correct answers) is GPL research data, so it is never
committed: ``fetch`` downloads the sdist with pip at bench time into a cache.

- ``site``: each answer becomes its own page (``/a/<id>.html``, title ``答案 <id>``,
  body the answer's ``zh`` text), reached from a front page through index pages of
  500 links each, like a real Q&A site's archive.
- ``judgments``: a split (train, valid, test) as a `tansuo eval` judgments file: type
  ``question``, the question's ``zh`` text, its answers' pages as site-relative URLs.
  Identical question texts are merged into one line with all their answers.
- ``run``: fetch, build, serve on 127.0.0.1, crawl with `tansuo crawl`, and evaluate
  with `tansuo eval` (Tansuo beside the three baselines). Tune on train or valid;
  report test.

    python -m bench.quality.insuranceqa run --data /tmp/iqa [--split test]
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Iterator
from pathlib import Path

PACKAGE = "insuranceqa-data==1.0"
SPLITS = ("train", "valid", "test")
LINKS_PER_INDEX = 500
MARKER = ".tansuo-insuranceqa-site.json"


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tansuo" / "insuranceqa"


def fetch(cache: Path | None = None) -> Path:
    """Directory holding answers.json.gz and the splits, downloading the sdist with pip
    (its ordinary client) the first time."""
    cache = Path(cache) if cache is not None else default_cache()
    data = cache / "insuranceqa_data"
    if (data / "answers.json.gz").is_file():
        return data
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="iqa-") as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", PACKAGE, "-d", tmp],
                       check=True, capture_output=True, text=True)  # fmt: skip
        (sdist,) = Path(tmp).glob("insuranceqa_data-*.tar.gz")
        with tarfile.open(sdist) as tar:
            members = [m for m in tar.getmembers() if m.isfile() and "/insuranceqa_data/" in m.name]
            for m in members:
                target = data / Path(m.name).name
                target.parent.mkdir(parents=True, exist_ok=True)
                extracted = tar.extractfile(m)
                assert extracted is not None
                target.write_bytes(extracted.read())
    return data


def _load(path: Path) -> dict:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return json.load(f)


def answer_path(answer_id: str) -> str:
    return f"/a/{answer_id}.html"


def build_site(data: Path, dest: Path) -> int:
    """Write the site into ``dest`` (once); return the number of answer pages."""
    dest = Path(dest)
    marker = dest / MARKER
    if marker.is_file():
        return int(json.loads(marker.read_text())["answers"])
    answers = _load(data / "answers.json.gz")
    ids = sorted(answers, key=int)
    (dest / "a").mkdir(parents=True, exist_ok=True)
    (dest / "list").mkdir(exist_ok=True)
    for answer_id in ids:
        (dest / answer_path(answer_id).lstrip("/")).write_text(_page(f"答案 {answer_id}", _paragraphs(answers[answer_id]["zh"])),
                                                                encoding="utf-8")  # fmt: skip
    chunks = [ids[i : i + LINKS_PER_INDEX] for i in range(0, len(ids), LINKS_PER_INDEX)]
    for n, chunk in enumerate(chunks, start=1):
        links = "".join(f'<li><a href="../a/{i}.html">答案 {i}</a></li>' for i in chunk)
        (dest / "list" / f"{n}.html").write_text(_page(f"答案目录 {n}", f"<ul>{links}</ul>"), encoding="utf-8")
    front = "".join(f'<li><a href="list/{n}.html">答案目录 {n}</a></li>' for n in range(1, len(chunks) + 1))
    (dest / "index.html").write_text(_page("保险问答", f"<ul>{front}</ul>"), encoding="utf-8")
    marker.write_text(json.dumps({"answers": len(ids), "package": PACKAGE}))
    return len(ids)


def _paragraphs(text: str) -> str:
    return "".join(f"<p>{html.escape(line.strip())}</p>" for line in text.splitlines() if line.strip())


def _page(title: str, body: str) -> str:
    return (f'<!DOCTYPE html>\n<html lang="zh-CN"><head><meta charset="utf-8"><title>{html.escape(title)}</title></head>'
            f"<body><h1>{html.escape(title)}</h1>{body}</body></html>\n")  # fmt: skip


def judgment_lines(data: Path, split: str) -> Iterator[str]:
    """The split as judgments lines (type, question, site-relative answer URLs)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {', '.join(SPLITS)}")
    questions = _load(data / f"{split}.json.gz")
    merged: dict[str, dict[str, None]] = {}
    for key in sorted(questions, key=int):
        q = questions[key]
        text = " ".join(str(q.get("zh", "")).split())
        if text and q.get("answers"):
            merged.setdefault(text, {}).update(dict.fromkeys(str(a) for a in q["answers"]))
    for text, answers in merged.items():
        yield "\t".join(("question", text, *(answer_path(a) for a in answers)))


def write_judgments(data: Path, split: str, out: Path) -> int:
    lines = list(judgment_lines(data, split))
    header = f"# InsuranceQA {split} split ({PACKAGE}, GPL research data: do not commit)\n# type\tquery\trelevant URL ...\n"
    Path(out).write_text(header + "\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


def run(data_dir: Path, split: str, cache: Path | None) -> int:
    """Fetch, build, serve, crawl and evaluate; print the table."""
    from services.cli.static_site_server import SiteServer

    data = fetch(cache)
    site_dir = data_dir / "site"
    print(f"{build_site(data, site_dir)} answer pages in {site_dir}", file=sys.stderr)
    judged = data_dir / f"{split}.tsv"
    print(f"{write_judgments(data, split, judged)} {split} questions in {judged}", file=sys.stderr)
    server = SiteServer(site_dir).start()
    try:
        cli = [sys.executable, "-m", "services.cli.main"]
        crawl_dir = data_dir / "crawl"
        subprocess.run([*cli, "crawl", server.url, "--data", str(crawl_dir), "--delay", "0", "--allow-private-networks",
                        "--no-progress"], check=True)  # fmt: skip
        return subprocess.run([*cli, "eval", str(judged), "--data", str(crawl_dir), "--base-url", server.url,
                               "--misses", str(data_dir / f"{split}-misses.tsv")]).returncode  # fmt: skip
    finally:
        server.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.quality.insuranceqa", description=__doc__.split("\n\n")[0])
    p.add_argument("--cache", type=Path, help=f"download cache (default {default_cache()})")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("site", help="build the answer site into DEST")
    s.add_argument("dest", type=Path)
    j = sub.add_parser("judgments", help="write a split as a tansuo eval judgments file")
    j.add_argument("out", type=Path)
    j.add_argument("--split", default="test", choices=SPLITS)
    r = sub.add_parser("run", help="build, serve, crawl and evaluate")
    r.add_argument("--data", type=Path, required=True, help="work directory (site, crawl, judgments)")
    r.add_argument("--split", default="test", choices=SPLITS)
    args = p.parse_args(argv)
    if args.cmd == "site":
        print(f"{build_site(fetch(args.cache), args.dest)} answer pages in {args.dest}")
        return 0
    if args.cmd == "judgments":
        print(f"{write_judgments(fetch(args.cache), args.split, args.out)} questions in {args.out}")
        return 0
    return run(args.data, args.split, args.cache)


if __name__ == "__main__":
    sys.exit(main())
