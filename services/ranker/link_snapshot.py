"""The link graph as the ranker ranks it: ids streamed from the LinkGraph port, aliases
resolved, pages numbered 0 … n-1 for the matrix.

Aliases: a redirect links to its target, and a canonical variant to its canonical URL,
with an anchor text of ``ALIAS_MARK`` + its own URL (see ``Ranker._alias_link``). Links
to an alias (http:// on an https:// site, /dir for /dir/, ?print=1 for the page) count
for the page it names: its inbound PageRank and its anchor text, as search engines
treat both as other names of one page. Chains are followed up to 5 hops, as crawlers
follow redirects; a loop aliases nothing.

Nothing here holds a URL string: a chunk of a few thousand pages is the largest Python
object, and the whole graph lives in flat id arrays of 4 bytes an edge.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from services.common.ports import LinkGraph

# The anchor of an alias's link in the graph (a redirect to its target, a canonical
# variant to its canonical URL): this, then the alias. A private-use character, which
# page text never yields as an anchor (clean_anchor).
ALIAS_MARK = "\ue001redirect "
MAX_REDIRECT_HOPS = 5


@dataclass(frozen=True)
class LinkSnapshot:
    """Pages by position: ``node_ids[p]`` is the URL id of page ``p`` (ascending)."""

    node_ids: np.ndarray
    src: np.ndarray  # edge positions, self-links and links to unknown pages left out
    dst: np.ndarray
    anchor_node: np.ndarray  # position of each anchor's (resolved) target
    anchor_text: np.ndarray  # its text id
    texts: dict[int, str]  # every text id in anchor_text


def read_snapshot(graph: LinkGraph) -> LinkSnapshot:
    sources, src, dst = _columns(graph.edge_chunks(), ("sources", "src", "dst"))
    a_src, a_dst, a_text = _columns(graph.anchor_chunks(), ("src", "dst", "text"))
    distinct = np.unique(a_text)
    texts = dict(zip(distinct.tolist(), graph.texts(distinct.tolist()), strict=True))
    is_mark = np.isin(a_text, [i for i, text in texts.items() if text.startswith(ALIAS_MARK)])
    aliases = follow_aliases(dict(zip(a_src[is_mark].tolist(), a_dst[is_mark].tolist(), strict=True)))
    size = 1 + max((int(a.max()) for a in (sources, dst, a_dst) if len(a)), default=-1)
    # 4-byte indexes: each whole-graph temporary below costs 4 bytes an edge, not 8.
    resolve = np.arange(size, dtype=np.uint32)
    resolve[list(aliases)] = list(aliases.values())
    node_ids = np.unique(resolve[sources])
    position = np.full(size, -1, dtype=np.int32)
    position[node_ids] = np.arange(len(node_ids), dtype=np.int32)
    src, dst = position[resolve[src]], position[resolve[dst]]
    keep = (dst >= 0) & (dst != src)
    a_node = position[resolve[a_dst[~is_mark]]]
    a_text = a_text[~is_mark]
    known = a_node >= 0
    return LinkSnapshot(node_ids, src[keep], dst[keep], a_node[known], a_text[known], texts)


def _columns(chunks: Iterable[Any], names: tuple[str, ...]) -> list[np.ndarray]:
    """The named arrays of every chunk, each joined into one."""
    parts: dict[str, list[np.ndarray]] = {name: [] for name in names}
    for chunk in chunks:
        for name in names:
            parts[name].append(getattr(chunk, name))
    return [np.concatenate(parts[name]) if parts[name] else np.empty(0, dtype=np.uint32) for name in names]


def follow_aliases(step: Mapping[int, int]) -> dict[int, int]:
    """Alias → the page it finally names, from alias → the URL it points at."""
    out = {}
    for source, target in step.items():
        for _ in range(MAX_REDIRECT_HOPS):
            if target not in step:
                break
            target = step[target]
        if target not in step and target != source:
            out[source] = target
    return out
