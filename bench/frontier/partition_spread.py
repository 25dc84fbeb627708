"""How evenly fetch jobs keyed by host spread over Kafka partitions.

Jobs are keyed by host so one host's URLs stay in one partition (one consumer owns a
host, which keeps politeness simple). The price is balance: a partition carries all
of its hosts' URLs. This measures that price on 1M URLs shaped like a real crawl,
side by side with keying by URL (perfect balance, no host locality), with Kafka's own
partitioner (murmur2 of the key, as kafka-python's DefaultPartitioner does).

The URL shape: host sizes follow a power law (a few large sites, a long tail of
small ones), as measured for web hosts, e.g. Broder et al., "Graph structure in the
Web" (2000), and Baeza-Yates et al. on national webs; exponent 1.1 here.
"""

from __future__ import annotations

import random
import statistics
from collections import Counter
from dataclasses import dataclass

from kafka.partitioner.default import murmur2

_WORDS = ("news", "lib", "math", "cs", "law", "med", "eng", "art", "gov", "docs", "jwc", "yjs", "zsb", "hr")


@dataclass(frozen=True)
class Spread:
    partitions: int
    max_over_mean: float  # the busiest partition's load over the mean
    min_over_mean: float
    cv: float  # coefficient of variation of per-partition load


def crawl_shaped_urls(n_urls: int, n_hosts: int, seed: int = 7, giant_share: float = 0.0) -> list[tuple[str, str]]:
    """(host, url) pairs: power-law host sizes, optionally one giant host holding a share."""
    rng = random.Random(seed)
    hosts = [f"{rng.choice(_WORDS)}{i}.{rng.choice(('edu', 'gov', 'com', 'org'))}.cn" for i in range(n_hosts)]
    weights = [1.0 / (rank + 1) ** 1.1 for rank in range(n_hosts)]
    giant = int(n_urls * giant_share)
    picks = rng.choices(hosts, weights=weights, k=n_urls - giant) + ["giant.example.cn"] * giant
    return [(h, f"http://{h}/{rng.choice(_WORDS)}/{rng.randrange(10**7)}.html") for h in picks]


def _hash(key: str) -> int:
    return murmur2(key.encode("utf-8")) & 0x7FFFFFFF  # kafka-python's DefaultPartitioner


def spread(keys: list[int], partitions: int) -> Spread:
    """Per-partition load for items whose partition key hashes are ``keys``."""
    load: Counter[int] = Counter(k % partitions for k in keys)
    counts = [load.get(p, 0) for p in range(partitions)]
    mean = statistics.fmean(counts)
    return Spread(partitions, max(counts) / mean, min(counts) / mean, statistics.pstdev(counts) / mean)


def run(n_urls: int = 1_000_000, n_hosts: int = 10_000) -> list[dict[str, object]]:
    """URL load per partition keyed by host (Tansuo) and by URL (the balance baseline),
    and hosts per partition, which bounds a partition's fetch rate under politeness."""
    rows: list[dict[str, object]] = []
    for label, share in (("power-law hosts", 0.0), ("plus one giant host (20% of URLs)", 0.2)):
        pairs = crawl_shaped_urls(n_urls, n_hosts, giant_share=share)
        host_hash = {h: _hash(h) for h in {h for h, _ in pairs}}
        by_host_keys = [host_hash[h] for h, _ in pairs]
        by_url_keys = [_hash(u) for _, u in pairs]
        distinct_hosts = list(host_hash.values())
        for partitions in (8, 32, 128):
            by_host, by_url = spread(by_host_keys, partitions), spread(by_url_keys, partitions)
            hosts = spread(distinct_hosts, partitions)
            rows.append(
                {
                    "URLs": label,
                    "partitions": partitions,
                    "URLs by host key: max/mean": round(by_host.max_over_mean, 2),
                    "min/mean": round(by_host.min_over_mean, 2),
                    "URLs by URL key (baseline): max/mean": round(by_url.max_over_mean, 3),
                    "ratio host/URL": round(by_host.max_over_mean / by_url.max_over_mean, 2),
                    "hosts per partition: max/mean": round(hosts.max_over_mean, 2),
                }
            )
    return rows


if __name__ == "__main__":
    for row in run():
        print(row)
