"""The console's pure parts: the pages-per-second chart and the robots.txt rules shown."""

from __future__ import annotations

from services.api.admin_overview import robots_rules
from services.api.rate_chart import HEIGHT, WIDTH, rate_chart

NOW = 1_000_000 * 60 + 30.0  # half-way through a minute


def test_the_chart_has_one_point_per_full_minute_and_zero_where_nothing_was_fetched() -> None:
    minute = NOW // 60 * 60
    chart = rate_chart([(minute - 60, 120), (minute - 180, 60), (minute, 999)], NOW, minutes=10)
    points = [tuple(map(float, p.split(","))) for p in chart.points.split()]
    assert len(points) == 10 and points[0][0] == 0 and points[-1][0] == WIDTH
    assert chart.last_per_s == 2.0 and chart.peak_per_s == 2.0  # the minute still filling is left out
    assert points[-1][1] < points[-3][1] < points[-2][1] == HEIGHT  # 2/s above 1/s above nothing


def test_an_idle_crawl_draws_a_flat_line_at_the_bottom() -> None:
    chart = rate_chart([], NOW, minutes=5)
    assert chart.peak_per_s == 0 and all(p.endswith(f",{HEIGHT}") for p in chart.points.split())


def test_the_robots_rules_shown_are_the_rule_lines_without_comments() -> None:
    text = "# hello\nUser-agent: *\nDisallow: /private/  # keep out\n\nCrawl-delay: 5\nSitemap: http://a.cn/s.xml\nNoise here\n"
    assert robots_rules(text) == ["User-agent: *", "Disallow: /private/", "Crawl-delay: 5", "Sitemap: http://a.cn/s.xml"]
    assert robots_rules(None) == [] and robots_rules("") == []
