"""The small Chinese site the container test crawls: a dozen hosts, made here, served by
site_server.py from a container of the stack.

The hosts are chosen so that their fetch jobs land in every partition of the fetch
topic (Kafka keys them by host, with kafka-python's murmur2 partitioner), so every
crawler of a group gets work whatever partitions it is given. Each article page
carries the site's common word and a code of its own; the first host also has the
pages that make the dashboards' rarer series appear: a redirect, a page that is gone,
two copies of one page, a noindex page, a page robots.txt forbids, and a document (plain
text) for the extractor.
"""

from __future__ import annotations

import html
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from kafka.partitioner.default import murmur2

from services.common.domain.url_canonical import host_of

PORT = 8000
ARTICLES = 8  # a host, besides its home page: about 9 s of crawling at the compose delay of 1 s
COMMON_WORD = "丝绸之路"  # in every home and article page and the document, and in no other page
DOCUMENT = "/notice.txt"  # on the first host

SENTENCES = (
    "张骞出使西域，打通了汉朝与中亚各国往来的道路。",
    "敦煌莫高窟保存了一千多年间的壁画和彩塑。",
    "商队带着丝绸、瓷器和茶叶，穿过戈壁和沙漠向西而行。",
    "玄奘从长安出发，历经艰险到达天竺求取佛经。",
    "喀什的巴扎上至今仍能看到各地商人交换货物的热闹景象。",
    "骆驼耐渴耐饥，是沙漠中最可靠的运输工具。",
    "葡萄、苜蓿和胡麻经由这条道路传入中原。",
    "造纸术和印刷术向西传播，改变了欧洲的书写文化。",
    "河西走廊夹在祁连山和北山之间，是东西交通的咽喉。",
    "撒马尔罕的商人以善于经营远途贸易而闻名。",
    "唐代长安城里居住着来自波斯和大食的商人与使节。",
    "海上航线从泉州和广州出发，经过马六甲海峡抵达印度洋。",
    "驿站为往来的使者和商旅提供食宿与换乘的马匹。",
    "考古学家在楼兰古城遗址发现了大量木简和织物。",
    "琵琶和胡旋舞从西域传入，丰富了中原的音乐舞蹈。",
    "今天的铁路和公路沿着古老的路线连接起欧亚大陆。",
    "吐鲁番的坎儿井把雪山融水引到绿洲，灌溉葡萄园。",
    "粟特人往来各地，把多种语言和宗教带到了沿途城市。",
    "阳关和玉门关是古代出入西域的重要关口。",
    "波斯的银币在中国西北的墓葬中屡有出土。",
)
TOPICS = ("使节", "石窟", "商队", "取经", "集市", "骆驼", "物产", "技术",
          "走廊", "商人", "长安", "海路", "驿站", "考古", "乐舞", "今日")  # fmt: skip
CITIES = ("敦煌", "张掖", "武威", "酒泉", "哈密", "龟兹", "于阗", "疏勒", "高昌", "楼兰", "碎叶", "怛罗斯")
# No two pages share more than this many of the sentences above, and each page has a
# sentence of its own: the search folds near-duplicate pages (MinHash, word pairs)
# into one result, and every page here must stay a result of its own.
SHARED_SENTENCES = 2
NEAR_DUPLICATE_MARGIN = 0.5  # below minhash.THRESHOLD (0.7)


@dataclass(frozen=True)
class Site:
    root: Path
    hosts: tuple[str, ...]  # host names, without the port

    def url(self, host: str, path: str = "/") -> str:
        return f"http://{host}:{PORT}{path}"

    @property
    def seeds(self) -> list[str]:
        return [self.url(host) for host in self.hosts]

    @property
    def searchable(self) -> set[str]:
        """The URLs a search for COMMON_WORD must find once the crawl is over."""
        pages = {
            self.url(h, p) for h in self.hosts for p in ("/", *(f"/a{n:02d}.html" for n in range(1, ARTICLES + 1)))
        }
        return pages | {self.url(self.hosts[0], DOCUMENT)}


def hosts_covering_partitions(partitions: int) -> tuple[str, ...]:
    """One host name for each partition of a topic of ``partitions`` partitions."""
    chosen: dict[int, str] = {}
    n = 0
    while len(chosen) < partitions:
        host = f"s{n:02d}.zhan.test"
        key = host_of(f"http://{host}:{PORT}/").encode()
        # kafka-python's DefaultPartitioner, which the bus's producer uses.
        chosen.setdefault((murmur2(key) & 0x7FFFFFFF) % partitions, host)
        n += 1
    return tuple(chosen[p] for p in sorted(chosen))


def code(host_index: int, article: int) -> str:
    """The word only one article has."""
    return f"zq{host_index:02d}{article:02d}"


def _page(title: str, paragraphs: list[str], links: list[tuple[str, str]], head: str = "") -> str:
    body = "".join(f"<p>{html.escape(p)}</p>" for p in paragraphs)
    items = "".join(f'<li><a href="{href}">{html.escape(text)}</a></li>' for href, text in links)
    return (f'<!DOCTYPE html><html lang="zh-CN"><head><meta charset="utf-8">{head}<title>{html.escape(title)}</title>'
            f"</head><body><h1>{html.escape(title)}</h1>{body}<ul>{items}</ul></body></html>")  # fmt: skip


def sentence_sets(count: int, size: int = 4) -> list[tuple[int, ...]]:
    """``count`` sets of ``size`` sentence numbers, no two sharing more than SHARED_SENTENCES."""
    chosen: list[tuple[int, ...]] = []
    for combo in itertools.combinations(range(len(SENTENCES)), size):
        if all(len(set(combo) & set(c)) <= SHARED_SENTENCES for c in chosen):
            chosen.append(combo)
            if len(chosen) == count:
                return chosen
    raise ValueError(f"only {len(chosen)} distinct sentence sets")


def _cities(host_index: int, n: int) -> tuple[str, str]:
    return CITIES[(host_index + n) % len(CITIES)], CITIES[(host_index * 5 + n * 7 + 3) % len(CITIES)]


def _own_sentence(host_index: int, n: int) -> str:
    """A sentence no other page has (its numbers and code)."""
    a, b = _cities(host_index, n)
    return (f"编号 {code(host_index, n)} 的商队在第{host_index * 10 + n + 3}天经过{a}，"
            f"又走了{n * 3 + host_index + 2}天才到达{b}。")  # fmt: skip


def _write_host(root: Path, index: int, host: str, sets: Iterator[tuple[int, ...]], extras: bool) -> list[str]:
    """The host's pages; the text of each page (for the near-duplicate check)."""
    d = root / host
    d.mkdir(parents=True)
    texts, links = [], []
    for n in range(1, ARTICLES + 1):
        title = f"{COMMON_WORD}札记：{TOPICS[(index + n) % len(TOPICS)]}"
        text = [SENTENCES[k] for k in next(sets)] + [_own_sentence(index, n)]
        (d / f"a{n:02d}.html").write_text(_page(title, text, [("/", "目录")]), encoding="utf-8")
        texts.append(" ".join(text))
        links.append((f"/a{n:02d}.html", "从{}到{}".format(*_cities(index, n))))
    robots = "User-agent: *\nDisallow:\n"
    if extras:
        # Pages that must not be found by the common word: two copies of one text, a
        # noindex page, a redirect to an article, a dead link, a page robots.txt forbids.
        tea = ["龙井茶产于杭州西湖一带，以色绿、香郁、味甘、形美著称。", "采茶的时节在清明前后。"]
        for name in ("dup-a.html", "dup-b.html"):
            (d / name).write_text(_page("西湖龙井", tea, []), encoding="utf-8")
        (d / "noindex.html").write_text(
            _page("内部草稿", ["这一页不进入索引。"], [], head='<meta name="robots" content="noindex">'),
            encoding="utf-8",
        )
        (d / "_redirects").write_text("/old.html /a01.html\n", encoding="utf-8")
        # A document for the extractor service: plain text, searchable like a page.
        notice = [f"{COMMON_WORD}文物展览通知", *(SENTENCES[k] for k in next(sets)), _own_sentence(index, 99)]
        (d / DOCUMENT.lstrip("/")).write_text("\n\n".join(notice) + "\n", encoding="utf-8")
        texts.append(" ".join(notice))
        links += [("/dup-a.html", "龙井"), ("/dup-b.html", "龙井副本"), ("/noindex.html", "草稿"),
                  ("/old.html", "旧地址"), ("/missing.html", "已删除"), ("/private/notes.html", "内部"),
                  (DOCUMENT, "展览通知")]  # fmt: skip
        robots = "User-agent: *\nDisallow: /private/\n"
    (d / "robots.txt").write_text(robots, encoding="utf-8")
    intro = [f"{COMMON_WORD}站点 {index} 的目录。", *(SENTENCES[k] for k in next(sets)), _own_sentence(index, 0)]
    (d / "index.html").write_text(_page(f"{COMMON_WORD}札记 · 站点 {index}", intro, links), encoding="utf-8")
    return [*texts, " ".join([*intro, *(text for _, text in links)])]


def _check_no_near_duplicates(texts: list[str]) -> None:
    """Fail at once, not in a 5-minute crawl, if two pages would fold into one result."""
    from services.common.analysis import analyze
    from services.common.domain import minhash

    sigs = [minhash.signature(analyze(t).words) for t in texts]
    assert all(sigs), "a page too short for a MinHash signature would be compared by nothing"
    worst = max(minhash.similarity(a, b) for a, b in itertools.combinations(sigs, 2))
    assert worst < NEAR_DUPLICATE_MARGIN, f"two pages of the test site are {worst:.2f} similar"


def build_site(root: Path, partitions: int) -> Site:
    """Write the site under ``root``/hosts, with the server script beside it."""
    hosts = hosts_covering_partitions(partitions)
    sets = iter(sentence_sets(len(hosts) * (ARTICLES + 1) + 1))  # the document takes one more
    texts = []
    for index, host in enumerate(hosts):
        texts += _write_host(root / "hosts", index, host, sets, extras=index == 0)
    _check_no_near_duplicates(texts)
    (root / "site_server.py").write_bytes((Path(__file__).parent / "site_server.py").read_bytes())
    return Site(root, hosts)
