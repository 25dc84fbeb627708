"""How long a page's store waits while a large document's record is written.

A 181 MB body (random bytes, as a PDF's are) is put on one thread; meanwhile another
puts a 16 KB page every 2 ms, as the crawl's reactor does. Printed: the large put's
time, and the longest any page's put took while it ran.

    python -m bench.documents.page_store_large_put [--code DIR] [--rounds 3]

``--code DIR`` imports the page store from another checkout (its base, say).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", type=Path, help="another checkout whose page store to measure")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    if args.code:
        sys.path.insert(0, str(args.code.resolve()))
        for name in [m for m in sys.modules if m.startswith("services")]:
            del sys.modules[name]
    from services.common.adapters.packs.page_store import PackPageStore
    from services.common.domain.documents import StoredPage

    big = StoredPage("http://a/big.pdf", 200, {"content-type": "application/pdf"}, 1.0,
                     b"%PDF-" + os.urandom(1 << 20) * 173, "")  # fmt: skip
    page = StoredPage("http://a/p", 200, {"content-type": "text/html"}, 1.0, b"<p>x</p>" * 2000, "")
    for _ in range(args.rounds):
        with tempfile.TemporaryDirectory(prefix="tansuo-large-put-") as tmp:
            store = PackPageStore(Path(tmp))
            store.put("first", page)
            writer = threading.Thread(target=store.put, args=("big", big))
            waits: list[float] = []
            started = time.perf_counter()
            writer.start()
            while writer.is_alive():
                t = time.perf_counter()
                store.put(f"p{len(waits)}", page)
                waits.append(time.perf_counter() - t)
                time.sleep(0.002)
            took = time.perf_counter() - started
            print(f"large put {took:.2f} s; {len(waits)} pages stored meanwhile, the longest wait "
                  f"{max(waits) * 1000:.0f} ms", flush=True)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
