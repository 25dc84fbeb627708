"""Chinese for the names the crawl report and the frontier use (reasons, limits, robots
states), as the console shows them: `tansuo report` and the API keep the names, which
scripts read; a person reading the console reads Chinese. An unknown name is shown
as it is, behind a Chinese word for what kind of thing it is, never alone.
"""

from __future__ import annotations

import re

WORDS = {
    # why URLs were skipped
    "robots": "robots.txt 禁止",
    "host_budget": "超出主机页数上限",
    "excluded": "已排除",
    # limits (docs/crawl-limits.md)
    "max_depth": "链接深度上限",
    "max_pages": "总页数上限（--max-pages）",
    "path_depth": "路径层数上限",
    "path_repetition": "路径重复上限",
    "query_params": "查询参数个数上限",
    "url_length": "网址长度上限",
    "canonical_length": "规范网址长度上限",
    "title_length": "标题长度上限",
    "headings": "小标题个数上限",
    "heading_length": "小标题长度上限",
    "anchor_length": "链接文字长度上限",
    "outlinks": "链接个数上限",
    "message_size": "消息大小上限",
    "robots_size": "robots.txt 大小上限",
    "page_size": "网页大小上限",
    "wall_time": "单次请求时长上限",
    # why fetches failed
    "dns": "域名解析失败",
    "timeout": "超时",
    "connection": "连接失败",
    "tls": "TLS 握手失败",
    "cancelled": "下载被取消",
    "fetch_error": "抓取出错",
    "private_address": "内网地址（未允许）",
    "too_large": "网页过大",
    "bad_url": "网址无效",
    "host_unreachable": "主机无法访问，已暂时放弃",
    "host_unavailable": "robots.txt 无法读取，主机已暂时放弃",
    "failed": "失败",
    "parse_error": "解析出错",
    "Retry-After": "服务器要求稍后再来（Retry-After）",
    # robots.txt states of a host
    "unknown": "未读取",
    "fetching": "读取中",
    "ready": "已读取",
    # not indexed
    "not HTML": "不是网页",
    "not_html": "不是网页",
    "noindex (the page asks not to be indexed)": "网页要求不编入索引（noindex）",
    "larger than the page size cap": "超过网页大小上限",
    "on a private address": "内网地址（未允许）",
}
_HTTP = re.compile(r"(?:robots_)?http_(\d{3})|(?:HTTP )?(\d{3})")
_DETAIL = re.compile(r"(.+?) \((.+)\)")


def zh(name: str) -> str:
    """A report or frontier name in Chinese; details after ':' or in parentheses kept."""
    name = name.strip()
    if name in WORDS:
        return WORDS[name]
    m = _HTTP.fullmatch(name)
    if m:
        return f"HTTP {m.group(1) or m.group(2)}"
    m = _DETAIL.fullmatch(name)
    if m and m.group(1) in WORDS:
        return f"{WORDS[m.group(1)]}（{m.group(2)}）"
    head, colon, detail = name.partition(":")
    if colon and head in WORDS:
        return f"{WORDS[head]}（{zh(detail)}）"
    if name.startswith("robots.txt "):
        return f"robots.txt：{zh(name.removeprefix('robots.txt '))}"
    return f"其他原因（{name}）"
