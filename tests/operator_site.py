"""A small local site as an operator meets one (issue 38): poems in traditional script,
a page of links, files that are not HTML (PDF, DOCX, plain text), links to pages that
do not exist, and a robots.txt rule. Served on 127.0.0.1 by the product's own
SiteServer; every route is built here, nothing is read from outside the repository.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from services.cli.static_site_server import SiteServer

POEMS = [
    ("上都酬章十八兄", "清江", ["每歎經年別，人生有幾年。", "關河長問道，風雨獨隨緣。", "寓蝶成莊夢，懷人識禰賢。", "徽猷不及此，空媿白華篇。"]),
    ("靜夜思", "李白", ["牀前明月光，疑是地上霜。", "舉頭望明月，低頭思故鄉。"]),
    ("春曉", "孟浩然", ["春眠不覺曉，處處聞啼鳥。", "夜來風雨聲，花落知多少。"]),
    ("登鸛雀樓", "王之渙", ["白日依山盡，黃河入海流。", "欲窮千里目，更上一層樓。"]),
    ("相思", "王維", ["紅豆生南國，春來發幾枝。", "願君多采擷，此物最相思。"]),
    ("江雪", "柳宗元", ["千山鳥飛絕，萬徑人蹤滅。", "孤舟蓑笠翁，獨釣寒江雪。"]),
    ("鹿柴", "王維", ["空山不見人，但聞人語響。", "返景入深林，復照青苔上。"]),
    ("鳥鳴澗", "王維", ["人閒桂花落，夜靜春山空。", "月出驚山鳥，時鳴春澗中。"]),
]
BROKEN = [f"/missing/{n}.html" for n in range(1, 5)]  # linked from poem pages, never served
FILES = {
    "/files/handbook.pdf": ("application/pdf", b"%PDF-1.4\n% not a real pdf, a file the crawler must not parse\n"),
    "/files/notes.docx": ("application/vnd.openxmlformats-officedocument.wordprocessingml.document", b"PK\x03\x04docx"),
    "/files/readme.txt": ("text/plain; charset=utf-8", "這是一個純文字檔案，不是網頁。".encode()),
}
ROBOTS = "User-agent: *\nDisallow: /private/\n"


def _page(title: str, body: str) -> bytes:
    return (f"<!doctype html><html lang='zh-Hant'><head><meta charset='utf-8'><title>{title}</title></head>"
            f"<body>{body}</body></html>").encode()  # fmt: skip


def poem_path(n: int) -> str:
    return f"/p/{n}.html"


def _routes() -> dict[str, tuple[int, dict[str, str], bytes]]:
    html = {"Content-Type": "text/html; charset=utf-8"}
    routes: dict[str, tuple[int, dict[str, str], bytes]] = {}
    for n, (title, author, lines) in enumerate(POEMS, start=1):
        broken = BROKEN[n % len(BROKEN)]
        body = (f"<h1>{title}</h1><p>{author}</p><p>{'<br>'.join(lines)}</p>"
                f"<p>注釋：本詩見於《全唐詩》，此處收錄以供檢索測試之用，全文照錄，不加刪改。</p>"
                f"<p><a href='/'>目錄</a> <a href='{broken}'>註解</a></p>")  # fmt: skip
        routes[poem_path(n)] = (200, html, _page(title, body))
    links = "".join(f"<li><a href='{poem_path(n)}'>{t}</a></li>" for n, (t, _, _) in enumerate(POEMS, start=1))
    files = "".join(f"<li><a href='{path}'>{path.rsplit('/', 1)[1]}</a></li>" for path in FILES)
    routes["/"] = (200, html, _page("唐詩選讀", f"<h1>唐詩選讀</h1><ul>{links}</ul><ul>{files}</ul>"
                                    f"<p><a href='/private/draft.html'>草稿</a> <a href='{BROKEN[0]}'>舊目錄</a></p>"))  # fmt: skip
    for path, (ctype, body) in FILES.items():
        routes[path] = (200, {"Content-Type": ctype}, body)
    routes["/private/draft.html"] = (200, html, _page("草稿", "<p>不應被抓取。</p>"))
    return routes


@dataclass
class OperatorSite:
    server: SiteServer
    routes: dict[str, tuple[int, dict[str, str], bytes]] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.server.url

    @property
    def pages(self) -> int:
        """HTML pages reachable and allowed: the front page and the poems."""
        return 1 + len(POEMS)

    def stop(self) -> None:
        self.server.stop()


def serve_operator_site(root: Path) -> OperatorSite:
    """``root`` is an empty directory: every answer is a route."""
    routes = _routes()
    root.mkdir(parents=True, exist_ok=True)
    server = SiteServer(root, robots_txt=ROBOTS, extra_routes=routes).start()
    return OperatorSite(server, routes)
