"""`tansuo eval`: measure search quality on judged queries, beside baseline rankers.

One module per job: ``judgments`` (the TSV format), ``metrics`` (MRR, nDCG, recall,
P@1), ``tokens`` (the one seam to the indexer's tokeniser), ``corpus`` (every indexed
document, tokenised once), ``baselines`` (BM25, TF-IDF cosine, PageRank + hits),
``targets`` (Tansuo in-process or over HTTP), ``generate`` (known-item query sets),
``report`` (tables and JSON), ``runner`` (ties them together).
"""
