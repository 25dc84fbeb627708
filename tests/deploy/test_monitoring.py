"""Alert rules and dashboards: valid for Prometheus, tested, and naming real metrics."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.deploy.deploy_tools import DASHBOARDS, INSTALL_PROMTOOL, REPO, dashboard_queries, require_tool, run

yaml = pytest.importorskip("yaml", reason="PyYAML missing: pip install kubernetes-validate (it brings PyYAML)")

ALERTS = REPO / "deploy/prometheus/alerts.yml"
ALERTS_TEST = REPO / "deploy/prometheus/alerts_test.yml"
METRIC = re.compile(r"\btansuo_[a-z0-9_]+\b")


def alert_rules() -> list[dict]:
    return [rule for group in yaml.safe_load(ALERTS.read_text())["groups"] for rule in group["rules"]]


def exported_metric_names() -> set[str]:
    """Every series name the catalog's metrics export (histograms: _bucket, _sum, _count)."""
    from prometheus_client.metrics import MetricWrapperBase

    from services.common.runtime import metrics

    names = set()
    for obj in vars(metrics).values():
        if not isinstance(obj, MetricWrapperBase):
            continue
        for family in obj.describe():
            if family.type == "histogram":
                names |= {f"{family.name}_bucket", f"{family.name}_sum", f"{family.name}_count"}
            elif family.type == "counter":
                names.add(f"{family.name}_total")
            else:
                names.add(family.name)
    return names


def test_promtool_accepts_the_alert_rules():
    promtool = require_tool("promtool", INSTALL_PROMTOOL)
    run([promtool, "check", "rules", ALERTS])


def test_every_alert_fires_and_stays_quiet_in_promtools_unit_tests():
    promtool = require_tool("promtool", INSTALL_PROMTOOL)
    run([promtool, "test", "rules", ALERTS_TEST.name], cwd=ALERTS_TEST.parent)


def test_each_alert_has_a_firing_case_and_a_quiet_case():
    cases: dict[str, set[bool]] = {}
    for test in yaml.safe_load(ALERTS_TEST.read_text())["tests"]:
        for check in test.get("alert_rule_test", []):
            cases.setdefault(check["alertname"], set()).add(bool(check.get("exp_alerts")))
    for rule in alert_rules():
        assert cases.get(rule["alert"]) == {True, False}, rule["alert"]


def test_alerts_and_dashboards_name_only_metrics_of_the_catalog():
    exported = exported_metric_names()
    used = {(f"alert {r['alert']}", name) for r in alert_rules() for name in METRIC.findall(r["expr"])}
    used |= {(where, name) for where, expr in dashboard_queries() for name in METRIC.findall(expr)}
    unknown = sorted((where, name) for where, name in used if name not in exported)
    assert not unknown, f"not in services/common/runtime/metrics.py: {unknown}"


def test_the_dashboards_show_what_operators_watch():
    queries = " ".join(expr for _, expr in dashboard_queries())
    for needed in (
        "sum by (code) (rate(tansuo_pages_fetched_total",
        "max by (state) (tansuo_frontier_urls)",  # every scheduler pod reports the whole frontier
        "tansuo_frontier_due_urls",
        "tansuo_frontier_blocked_hosts",
        "tansuo_politeness_wait_seconds_bucket",
        "rate(tansuo_pages_indexed_total",
        "histogram_quantile(0.5, sum by (le) (rate(tansuo_indexing_latency_seconds_bucket",
        "histogram_quantile(0.99, sum by (le) (rate(tansuo_indexing_latency_seconds_bucket",
        "tansuo_duplicates_total",
        "max by (instance) (tansuo_indexer_lag_seconds)",  # issue 40: how late search is
        'rate(tansuo_index_requests_total{service="indexer"}',
        "histogram_quantile(0.99, sum by (le) (rate(tansuo_search_duration_seconds_bucket",
        "sum by (outcome) (rate(tansuo_search_requests_total",
        'tansuo_search_analytics_searches_total{result="zero"}',  # what people search for and do not find
        "rate(tansuo_search_result_clicks_total",
        "tansuo_errors_total",
    ):
        assert needed in queries, needed


def test_dashboard_queries_are_valid_promql(tmp_path: Path):
    promtool = require_tool("promtool", INSTALL_PROMTOOL)
    # promtool parses PromQL only inside rule files: wrap each query in a recording rule.
    rules = [
        {"record": f"tansuo:dashboard_query:{i}", "expr": expr.replace("$__rate_interval", "5m")}
        for i, (_, expr) in enumerate(dashboard_queries())
    ]
    path = tmp_path / "dashboard_queries.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    run([promtool, "check", "rules", path])


def test_the_dashboards_are_what_their_generator_writes():
    proc = subprocess.run(
        [sys.executable, str(REPO / "deploy/grafana/build_dashboards.py"), "--check"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr


def test_each_dashboard_has_its_own_uid_and_picks_its_data_source():
    uids = set()
    for path in DASHBOARDS:
        board = json.loads(path.read_text(encoding="utf-8"))
        assert board["uid"] == path.stem and board["uid"] not in uids
        uids.add(board["uid"])
        assert [v["type"] for v in board["templating"]["list"]] == ["datasource"]
        for panel in board["panels"]:
            assert panel["datasource"]["uid"] == "${datasource}", (path.name, panel["title"])
    assert len(uids) >= 4
