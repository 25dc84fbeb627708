"""The LibreOffice help site builder's navigation, on a tiny help tree in the package's
layout (the real package is fetched only by the bench itself)."""

from __future__ import annotations

import json

from bench.sites.libreoffice_help_site import (
    contents_modules,
    han_counts,
    page_text,
    write_navigation,
)

CONTENTS_JS = """document.getElementById("Contents").innerHTML='\\
    <ul><li><input type="checkbox" id="08"><label for="08">电子表格 (Calc)</label><ul>\\
    <li><input type="checkbox" id="0801"><label for="0801">常规信息</label><ul>\\
    <li><a target="_top" href="zh-CN/text/scalc/a.html?DbPAR=CALC">排序</a></li>\\
    <li><a target="_top" href="zh-CN/text/scalc/a.html?DbPAR=CALC#bm_1">排序 again</a></li>\\
    </ul></li></ul></li>\\
    <li><input type="checkbox" id="04"><label for="04">演示文稿 (Impress)</label><ul>\\
    <li><a target="_top" href="zh-CN/text/simpress/c.html?DbPAR=IMPRESS">It\\'s 动画</a></li>\\
    </ul></li></ul>\\
';
"""


def _help_page(title: str, text: str) -> str:
    return (f'<html><head><base href="../../../"><title>{title}</title><script>var x = "脚本";</script></head>'
            f'<body><header>LibreOffice 7.4 帮助</header><div id="DisplayArea"><h1>{title}</h1><p>{text}</p>'
            f"<script>var y = 1;</script></div><footer>Help content debug info</footer></body></html>")  # fmt: skip


def test_contents_modules_keeps_labels_and_drops_queries_targets_and_checkboxes():
    calc, impress = contents_modules(CONTENTS_JS)
    assert (calc.ident, calc.label, calc.pages) == ("08", "电子表格 (Calc)", ("zh-CN/text/scalc/a.html",))
    assert "<strong>常规信息</strong>" in calc.tree
    assert 'href="zh-CN/text/scalc/a.html"' in calc.tree
    assert "DbPAR" not in calc.tree and "target" not in calc.tree and "input" not in calc.tree
    assert (impress.ident, impress.label, impress.pages) == ("04", "演示文稿 (Impress)", ("zh-CN/text/simpress/c.html",))
    assert "It's 动画" in impress.tree


def test_page_text_is_the_display_area_without_scripts():
    text = page_text(_help_page("排序", "按列排序 VLOOKUP").encode())
    assert text == "排序 按列排序 VLOOKUP"
    assert han_counts(text) == (6, 13)


def test_navigation_reaches_every_page_from_the_front(tmp_path):
    (tmp_path / "zh-CN").mkdir()
    (tmp_path / "zh-CN" / "contents.js").write_text(CONTENTS_JS, encoding="utf-8")
    for path, title in [("scalc/a.html", "数据排序"), ("scalc/b.html", "<不在目录>"), ("simpress/c.html", "动画")]:
        page = tmp_path / "zh-CN" / "text" / path
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(_help_page(title.replace("<", "&lt;").replace(">", "&gt;"), "正文"), encoding="utf-8")

    stats = write_navigation(tmp_path)

    assert (stats["pages"], stats["pages_in_contents"]) == (3, 2)
    assert stats["han_chars"] == (4 + 2) + (4 + 2) + (2 + 2) and stats["han_share"] == 1.0
    front = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert 'href="toc/08.html"' in front and 'href="toc/04.html"' in front and 'href="toc/other-scalc.html"' in front
    assert "other-simpress" not in front  # every Impress page is in the tree
    assert 'href="../zh-CN/text/scalc/a.html"' in (tmp_path / "toc" / "08.html").read_text(encoding="utf-8")
    other = (tmp_path / "toc" / "other-scalc.html").read_text(encoding="utf-8")
    assert '<a href="../zh-CN/text/scalc/b.html">&lt;不在目录&gt;</a>' in other
    assert "a.html" not in other
    json.dumps(stats)  # the marker stores it
