"""The InsuranceQA bench's site builder and judgments converter, on a tiny synthetic
corpus in the package's layout (the real data is GPL and never in the repository)."""

from __future__ import annotations

import gzip
import json

from bench.quality.insuranceqa import build_site, write_judgments
from services.evaluation.judgments import read_judgments


def _write(path, obj):
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False)


def test_site_and_judgments(tmp_path):
    data = tmp_path / "insuranceqa_data"
    data.mkdir()
    _write(data / "answers.json.gz", {"1": {"zh": "残疾保险\n由雇主提供"}, "2": {"zh": "定期寿险<到期>"}, "10": {"zh": "第三个"}})
    _write(data / "test.json.gz", {
        "0": {"zh": "法律要求残疾保险吗？", "answers": ["1"]},
        "1": {"zh": "定期 人寿保险", "answers": ["2"]},
        "2": {"zh": "法律要求残疾保险吗？", "answers": ["10", "1"]},  # same text: merged
        "3": {"zh": "没有答案", "answers": []},
    })  # fmt: skip
    site = tmp_path / "site"
    assert build_site(data, site) == 3
    page = (site / "a" / "2.html").read_text(encoding="utf-8")
    assert "<title>答案 2</title>" in page and "定期寿险&lt;到期&gt;" in page
    assert "<p>残疾保险</p><p>由雇主提供</p>" in (site / "a" / "1.html").read_text(encoding="utf-8")
    assert 'href="../a/10.html"' in (site / "list" / "1.html").read_text(encoding="utf-8")
    assert "<title>保险问答</title>" in (site / "index.html").read_text(encoding="utf-8")

    out = tmp_path / "test.tsv"
    assert write_judgments(data, "test", out) == 2
    judged = read_judgments(out, base_url="http://127.0.0.1:9/")
    assert [(j.qtype, j.query, j.relevant) for j in judged] == [
        ("question", "法律要求残疾保险吗？", ("http://127.0.0.1:9/a/1.html", "http://127.0.0.1:9/a/10.html")),
        ("question", "定期 人寿保险", ("http://127.0.0.1:9/a/2.html",)),
    ]
