"""Folding a crawled site's pages: seconds for one pass over every page's title and
text, as the indexer folds them, in a fresh process (the conversion cache starts empty).

Run it from two checkouts on the same index, in turns, for a ratio:

    python -m bench.indexing.fold_pages DATA_DIR [--rounds 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

_ONE_PASS = """
import sys, time
from pathlib import Path
from services.common.analysis import fold
from services.common.bootstrap import build_search_index
from services.common.config import Settings
from services.evaluation.corpus import load_corpus
index = build_search_index(Settings(data_dir=Path(sys.argv[1])), read_only=True)
texts = [d.title + "\\n" + d.text for d in load_corpus(index)]
fold("預熱")
start = time.perf_counter()
for text in texts:
    fold(text)
print(time.perf_counter() - start, len(texts), sum(map(len, texts)))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="data directory of an embedded index")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    for _ in range(args.rounds):
        begun = time.perf_counter()
        out = subprocess.run([sys.executable, "-c", _ONE_PASS, str(args.data)], capture_output=True, text=True, check=True)
        seconds, pages, chars = out.stdout.split()
        print(f"{float(seconds):.3f} s folding {pages} pages, {int(chars):,} characters ({time.perf_counter() - begun:.1f} s in all)")


if __name__ == "__main__":
    main()
