"""An install without the C module (no compiler at install time) builds the very same
documents, and says in its log that it runs slower."""

from __future__ import annotations

import subprocess
import sys
import textwrap

_BUILD = textwrap.dedent(
    """
    import hashlib, logging, sys
    if sys.argv[1] == "without":
        sys.modules["services.common._native"] = None  # import fails, as where it was not built
    logging.basicConfig(level=logging.WARNING)
    from services.common.domain.messages import PageEvent
    from services.common.runtime.native_code import native, warn_if_missing
    from services.indexer.document_builder import build_document
    warn_if_missing()
    print("native" if native else "python")
    body = ("用 apt-get 安装中华人民共和国软件包，設置頁面格式與儲存格。ＦＵＬＬ width Straße "
            "www.debian.org c++ 𠀀𠀁 한국어 ") * 12
    for n in range(1, 6):
        event = PageEvent(url=f"http://a.test/{n}", host="a.test", lease_id="x", title=f"第{n}章 軟體安裝", headings=["安装", "VLOOKUP 函數"],
                          body=body * n, content_hash=str(n), fetched_at=0.0)
        doc = build_document(event)
        print(hashlib.sha256(repr(doc).encode()).hexdigest())
    """
)


def _run(mode: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", _BUILD, mode], capture_output=True, text=True, check=True)


def test_documents_built_without_the_c_module_are_the_same() -> None:
    with_c, without = _run("with"), _run("without")
    assert with_c.stdout.splitlines()[0] == "native"
    assert without.stdout.splitlines()[0] == "python"
    assert with_c.stdout.splitlines()[1:] == without.stdout.splitlines()[1:]
    assert len(set(with_c.stdout.splitlines()[1:])) == 5


def test_the_indexer_warns_once_when_the_c_module_is_missing() -> None:
    assert "not built" in _run("without").stderr
    assert "not built" not in _run("with").stderr
