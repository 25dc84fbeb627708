"""Property-based testing of the running API from its contract (schemathesis): every
operation of services/api/openapi.json, with valid inputs and with inputs that break
the schema, against `tansuo serve` (gunicorn, real sockets) on an index of the search
test pages. No answer may be a 5xx, break the documented status codes, content types,
headers or schemas, or take longer than 2 s.

Hypothesis' example database is off (``database=None``): the run must not leave files
in the repository, and it is short enough to need no memory between runs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from services.api.api_docs import openapi_document
from services.common.adapters.tantivy.search_index import TantivySearchIndex
from services.common.config import Settings
from services.indexer.document_builder import build_document
from tests.search_pages import page_events
from tests.servers.net import free_port, stop_process, wait_for_http_ok, wait_for_port

pytestmark = pytest.mark.integration

TOKEN = "fuzz-token-0123456789"
SLOWEST_S = 15.0  # a hang, not speed: a loaded CI machine has held a seed POST over 2 s
EXAMPLES = 20  # per operation and mode: 21 operations x 2 modes x 20, about 25 s here
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("fuzz") / "data"
    index = TantivySearchIndex(data / "index", Settings(data_dir=data))
    index.upsert([build_document(event) for event in page_events()])
    index.commit()
    index.close()
    port, health_port = free_port(), free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TANSUO_", "PROMETHEUS_"))}
    env.update(
        TANSUO_API_TOKEN=TOKEN, TANSUO_API_WORKERS="1", TANSUO_HEALTH_HOST="127.0.0.1",
        TANSUO_HEALTH_PORT=str(health_port), TANSUO_CRAWLER_ALLOW_PRIVATE_NETWORKS="false",
        # Limits off, so that the fuzzing reaches the operations' logic: with them on,
        # most operations answered 429 (the negative cases' wrong tokens count as guesses).
        TANSUO_API_RATE_LIMIT_PER_S="0", TANSUO_API_AUTH_FAILURES_PER_MINUTE="1000000",
    )  # fmt: skip
    log_path = data.parent / "serve.log"
    with log_path.open("wb") as log_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "services.cli.main", "serve", "--data", str(data), "--host", "127.0.0.1",
             "--port", str(port)],
            env=env, stdout=log_file, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        wait_for_port(port, proc)
        url = f"http://127.0.0.1:{port}"
        # The first searches wait for the segmenter's dictionary.
        wait_for_http_ok(f"{url}/api/search?q=%E5%AE%89%E8%A3%85", proc, timeout_s=60, request_timeout_s=30,
                         interval_s=0.2, why=lambda: log_path.read_text(errors="replace"))  # fmt: skip
        yield url
    finally:
        stop_process(proc, timeout_s=20)


def _operations(base_url: str) -> list:  # schemathesis' operation objects
    with urllib.request.urlopen(f"{base_url}/api/openapi.json", timeout=30) as resp:  # what the server publishes
        schema = schemathesis.openapi.from_dict(json.load(resp))
    return [result.ok() for result in schema.get_all_operations()]  # ok() raises on a bad operation


def _has_inputs(operation) -> bool:
    return bool(list(operation.iter_parameters())) or operation.body is not None and len(operation.body) > 0


def test_no_operation_answers_5xx_off_contract_or_slowly(base_url: str) -> None:
    failures: list[str] = []
    operations = _operations(base_url)
    documented = sum(len(item) for item in openapi_document()["paths"].values())
    assert sorted(op.label for op in operations) and len(operations) == documented, [op.label for op in operations]
    for operation in operations:
        modes = [GenerationMode.POSITIVE] + ([GenerationMode.NEGATIVE] if _has_inputs(operation) else [])
        for mode in modes:

            @settings(
                max_examples=EXAMPLES, database=None, deadline=None, derandomize=False,
                suppress_health_check=list(HealthCheck),
            )  # fmt: skip
            @given(case=operation.as_strategy(generation_mode=mode))
            def exercise(case) -> None:
                started = time.monotonic()
                response = case.call(base_url=base_url, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
                took = time.monotonic() - started
                assert took < SLOWEST_S, f"{case.method} {case.formatted_path} took {took:.2f} s"
                case.validate_response(response, checks=CHECKS)

            try:
                exercise()
            except Unsatisfiable:
                # No input breaks this schema (a path parameter that is any non-empty
                # string: every string that fits in a path is valid). Nothing to send.
                assert mode is GenerationMode.NEGATIVE, operation.label
            except Exception as exc:  # collect every operation's first failure, then fail once
                failures.append(f"{operation.label} ({mode.value}): {exc}")
    assert not failures, "\n\n".join(failures)


PHASES = "examples,coverage,fuzzing,stateful"
CLI_EXAMPLES = 20  # per operation: the four phases take about 20 s here


def test_schemathesis_finds_nothing_in_any_of_its_phases(base_url: str, tmp_path) -> None:
    # The command line as an operator or a CI job runs it, with every default check
    # (the ones above and more: a 405 without Allow, a valid request refused, an invalid
    # one accepted, ...), over the four phases; its coverage phase found 21 failures.
    schemathesis_cli = Path(sys.executable).with_name("schemathesis")
    run = subprocess.run(
        [str(schemathesis_cli), "--config-file", str(Path(__file__).with_name("schemathesis.toml")), "run",
         f"{base_url}/api/openapi.json", "--phases", PHASES, "-n", str(CLI_EXAMPLES),
         "-H", f"Authorization: Bearer {TOKEN}", "--no-color"],
        capture_output=True, text=True, timeout=600, cwd=tmp_path,  # its report files stay out of the repository
        env={**os.environ, "SCHEMATHESIS_HOOKS": ""},
    )  # fmt: skip
    summary = run.stdout[run.stdout.find("SUMMARY") :]
    assert run.returncode == 0, run.stdout[-6000:]
    for phase in ("Examples", "Coverage", "Fuzzing", "Stateful"):
        assert f"✅ {phase}" in summary, summary
    assert "Rate limited" not in run.stdout, run.stdout[-3000:]  # the logic was reached, not the limiter


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as resp:
            return resp.status, resp.headers.get("Content-Type", ""), resp.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers.get("Content-Type", ""), exc.read().decode()


def test_a_query_too_long_for_a_request_line_gets_the_apis_own_answer(base_url: str) -> None:
    # About 900 Han characters passed gunicorn's 8190-byte request line, which answered
    # with its own HTML "414 Request Line is too large" instead of the API's JSON error.
    quoted = urllib.parse.quote("长" * 950)
    status, ctype, body = _get(f"{base_url}/api/search?q={quoted}")
    assert (status, ctype) == (400, "application/json") and "too long" in json.loads(body)["error"]
    status, ctype, body = _get(f"{base_url}/?q={quoted}")
    assert status == 400 and ctype.startswith("text/html") and "查询太长" in body


def test_a_query_that_is_not_utf8_is_refused(base_url: str) -> None:
    status, ctype, body = _get(f"{base_url}/api/search?q=%ED%A0%80")
    assert (status, ctype) == (400, "application/json") and "UTF-8" in json.loads(body)["error"]
