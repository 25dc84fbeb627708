"""A document on its way: the crawler's hand-off, the extractor's completed event, the
index document, and what a search result shows of it."""

from __future__ import annotations

import hashlib

import pytest

from services.common.domain.messages import FetchJob, PageEvent
from services.common.domain.search_types import SearchHit
from services.common.ports import Message
from services.crawler.fetch_outcome import outcome_from_response
from services.crawler.message_caps import DEFAULT_CAPS
from services.extractor.extracted_text import PAGE_BREAK, ExtractedText
from services.extractor.extraction_pool import ExtractionOutcome
from services.extractor.extractor import extracted_event, outcome_label
from services.indexer.document_builder import build_document
from services.search.document_results import display_title, document_fields
from services.search.query_syntax import QuerySyntaxError, parse

JOB = FetchJob(url="https://yz.example.edu.cn/2026/zsjz.pdf", host="yz.example.edu.cn", lease_id="L1", depth=2)
MSG = Message(topic="fetches.scheduled", key=JOB.host, payload=JOB.to_bytes(), offset=1)
PDF = b"%PDF-1.7\n" + b"x" * 100


def _respond(headers: dict[str, str], body: bytes = PDF, documents: bool = True):
    return outcome_from_response(JOB, MSG, 200, headers, body, 10_000, DEFAULT_CAPS, documents)


def test_a_document_is_stored_finished_and_handed_to_extraction_unparsed() -> None:
    outcome = _respond({"Content-Type": "application/octet-stream"})
    assert outcome.page is not None and outcome.page.body == PDF
    event = outcome.event
    assert event.document == "pdf" and not event.error and not event.extracted and not event.indexable
    assert event.content_hash == hashlib.sha1(PDF).hexdigest()  # the bytes decide whether it changed
    assert outcome.document == event
    assert outcome.links is not None and outcome.links.links == []  # a node of the link graph


def test_a_noindex_document_is_not_extracted() -> None:
    outcome = _respond({"Content-Type": "application/pdf", "X-Robots-Tag": "noindex"})
    assert outcome.event.noindex and outcome.document is None


def test_with_documents_off_a_pdf_is_stored_and_not_parsed_as_before() -> None:
    outcome = _respond({"Content-Type": "application/pdf"}, documents=False)
    assert outcome.event.error == "not_html" and outcome.document is None


def _fetched() -> PageEvent:
    return _respond({"Content-Type": "application/pdf"}).event


def test_the_extracted_event_carries_the_text_and_is_indexable() -> None:
    text = ExtractedText("pdf", "", ["2026年硕士研究生招生简章"], f"第一页{PAGE_BREAK}第二页 报名", 2, ["document_pages"])
    done = extracted_event(_fetched(), ExtractionOutcome(text=text), DEFAULT_CAPS)
    assert done.extracted and done.indexable and done.lease_id == "L1"
    assert (done.document, done.pages, done.body, done.limits) == ("pdf", 2, text.body, ["document_pages"])
    assert outcome_label(done) == "cut"
    doc = build_document(done)
    assert (doc.filetype, doc.doc_pages, doc.doc_size) == ("pdf", 2, len(PDF))


def test_a_skipped_document_is_an_extracted_event_with_its_reason() -> None:
    done = extracted_event(_fetched(), ExtractionOutcome(skipped="encrypted"), DEFAULT_CAPS)
    assert done.extracted and done.error == "document_encrypted" and not done.indexable
    assert outcome_label(done) == "encrypted"


def _hit(**fields: object) -> SearchHit:
    base = {"url": JOB.url, "site": JOB.host, "title": "", "headings": "", "body": "", "score": 1.0, "pagerank": 0.0}
    return SearchHit(**(base | fields))  # type: ignore[arg-type]


def test_a_documents_title_is_its_own_then_its_links_text_then_its_first_line() -> None:
    assert display_title(_hit(title="招生简章", filetype="pdf", anchors="别的")) == "招生简章"
    assert display_title(_hit(filetype="pdf", anchors="2026年招生简章 | 简章", headings="第一章")) == "2026年招生简章"
    assert display_title(_hit(filetype="pdf", headings="第一章 总则\n第二章")) == "第一章 总则"
    assert display_title(_hit(anchors="链接文字")) == ""  # a page keeps its own (empty) title


def test_a_pdf_result_names_the_page_of_its_snippet() -> None:
    body = f"第一页{PAGE_BREAK}第二页{PAGE_BREAK}第三页 报名时间"
    hit = _hit(filetype="pdf", body=body, doc_pages=3, doc_size=2048)
    fields = document_fields(hit, body.index("报名"))
    assert fields == {"filetype": "pdf", "size": 2048, "pages": 3, "page": 3, "page_url": f"{JOB.url}#page=3"}
    assert "page" not in document_fields(_hit(filetype="pptx", body=body, doc_pages=3), 5)
    assert document_fields(_hit(), 0) == {}


def test_filetype_operator_filters_and_excludes_formats() -> None:
    parsed = parse("招生 filetype:PDF -filetype：.doc")
    assert parsed.filetypes == ("pdf",) and parsed.excluded_filetypes == ("doc",)
    assert parse("filetype:xlsx").filetypes == ("xlsx",)  # a format alone is a query
    with pytest.raises(QuerySyntaxError):
        parse("招生 filetype:exe")


def test_a_large_document_is_hashed_later_off_the_reactor() -> None:
    from services.crawler.fetch_outcome import LARGE_BODY_BYTES, hashed

    big = b"%PDF-1.7\n" + b"x" * LARGE_BODY_BYTES
    outcome = _respond({"Content-Type": "application/pdf"}, body=big)
    assert outcome.event.content_hash == ""  # not on the reactor's thread
    done = hashed(outcome)
    digest = hashlib.sha1(big).hexdigest()
    assert done.event.content_hash == digest and done.document == done.event and done.page.content_hash == digest
    assert hashed(done) is done
