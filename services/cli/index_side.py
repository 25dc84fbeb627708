"""The indexing half of an embedded crawl: the indexer and ranker loops, and their drain.

The same class runs in the crawl's own process (TANSUO_EMBEDDED_PROCESSES=1) and in
the index process (services/cli/index_process.py), so both layouts end a crawl the
same way: the indexer drained and flushed first, then the ranker, then one PageRank
run, so that every page the crawler published is indexed and ranked.
"""

from __future__ import annotations

import threading

from services.cli.indexing_result import Finished
from services.common.bootstrap import build_dictionary_store, build_link_graph
from services.common.config import Settings
from services.common.ports import Bus, SearchIndex
from services.dictionaries.reanalysis import Reanalysis
from services.dictionaries.sync import DictionarySync
from services.indexer.indexer import Indexer
from services.ranker.ranker import Ranker

# How soon the loops notice the end of a crawl: they wait on the bus this long at a
# time, short because a second (the services' default) adds half a second to every
# crawl's end, waited out in an idle poll (docs/benchmarks.md, 'Fourth round (issue
# 12)'); the SQLite bus checks its file every 50 ms regardless.
STOP_CHECK_S = 0.05


class IndexSide:
    """Indexer and ranker threads over one bus and one writable index."""

    def __init__(self, cfg: Settings, bus: Bus, index: SearchIndex) -> None:
        self.index = index
        # The operator's dictionaries, loaded before the first page is analysed.
        store = build_dictionary_store(cfg)
        self.dictionaries = DictionarySync(cfg, lambda: store).start()
        self.reanalysis = Reanalysis(cfg, store, index, self.dictionaries)
        self.indexer = Indexer(cfg, bus, index, count_documents=True)
        self.ranker = Ranker(cfg, bus, build_link_graph(cfg), index)
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(
                target=self.indexer.run, args=(self._stop, STOP_CHECK_S), name="indexer", daemon=True
            ),
            # The final PageRank run happens in finish(), after the indexer has drained.
            threading.Thread(
                target=self.ranker.run,
                args=(self._stop,),
                kwargs={"final_recompute": False, "poll_timeout_s": STOP_CHECK_S},
                name="ranker",
                daemon=True,
            ),
            threading.Thread(target=self._reanalyse, name="reanalysis", daemon=True),
        ]

    def _reanalyse(self) -> None:
        while not self._stop.wait(0.5):
            if self.reanalysis.due():
                self.reanalysis.step()

    @property
    def indexed(self) -> int:
        """Documents in the index after the last commit (not upserts: a page indexed
        again, or a copy replaced by a better URL, is one document)."""
        return self.indexer.documents

    def start(self) -> None:
        for t in self._threads:
            t.start()

    def wait_ready(self) -> None:
        """Ready from the start: the index was opened before the threads began."""

    def alive(self) -> bool:
        return True  # threads of the caller's own process: they end only with it

    def close(self) -> None:
        self.stop()

    def stop(self) -> None:
        """End both loops; the indexer commits what it holds (its loop flushes on stop)."""
        self._stop.set()
        self.dictionaries.stop()
        for t in self._threads:
            if t.is_alive():
                t.join(timeout=120)

    def finish(self) -> Finished:
        """Stop, then index and rank whatever is left on the bus."""
        self.stop()
        while self.indexer.step(0.0):
            pass
        self.indexer.flush()
        while self.ranker.step(0.0):
            pass
        nodes = self.ranker.recompute().nodes
        return Finished(nodes, self.index.count())
