"""The Chinese a person reads in the web UI and the console for what the search service
and the framework say in English: the API's JSON keeps the English, for programs.

The search service's messages are matched by their fixed English wording (each is
exercised in tests/integration/test_ui_chinese.py), so a new message falls back to a
general Chinese sentence, never to English on a Chinese page.
"""

from __future__ import annotations

import re

_QUERY_MESSAGES: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"q must not be empty|q must contain something to search for"), "请输入要搜索的词。"),
    (re.compile(r"q is too long: at most (\d+) characters"), "查询太长：最多 {0} 个字。"),
    (re.compile(r"page must be an integer, not (.*)"), "页码必须是整数，“{0}”不是。"),
    (re.compile(r"page must be an integer"), "页码必须是整数。"),
    (re.compile(r"page must be 1 or more"), "页码从 1 开始。"),
    (re.compile(r"size must be an integer.*"), "每页条数必须是整数。"),
    (re.compile(r"size must be between 1 and (\d+)"), "每页条数必须在 1 到 {0} 之间。"),
    (re.compile(r"page \* size must not exceed (\d+).*"), "只能翻看前 {0} 条结果：请把查询写得更具体。"),
    (re.compile(r"site must be a host name.*"), "“站点”必须是主机名，例如 www.example.cn。"),
    (re.compile(r"site: needs a host name after it.*"), "site: 后面要跟主机名，例如 site:www.example.cn。"),
    (re.compile(r"a query of only exclusions.*"), "只有排除条件（-词、-site:）的查询找不到任何结果：请再加一个要搜索的词。"),
    (re.compile(r"q is not valid UTF-8.*"), "查询里有无法识别的字符（不是有效的 UTF-8 编码）。"),
]
QUERY_FALLBACK = "无法理解这个查询，请检查后再试。"

HTTP_MESSAGES = {
    400: "请求有误。",
    403: "没有权限访问这个页面。",
    404: "找不到这个页面：网址可能输错了，或者页面已经不存在。",
    405: "这个网址不接受这种请求方式。",
    413: "请求太大。",
    414: "网址太长。",
    429: "请求太频繁，请稍后再试。",
    500: "服务内部出错，请稍后再试。",
    503: "搜索服务暂时不可用，请稍后再试。",
}


def query_error(message: str) -> str:
    """A search service's BadQuery message, in Chinese."""
    for pattern, chinese in _QUERY_MESSAGES:
        m = pattern.fullmatch(message.strip())
        if m:
            return chinese.format(*(g.strip("'\"") for g in m.groups()))
    return QUERY_FALLBACK


def http_error(code: int) -> str:
    """What an HTTP error means, for the error page."""
    return HTTP_MESSAGES.get(code, HTTP_MESSAGES[500] if code >= 500 else HTTP_MESSAGES[400])


_SEED_MESSAGES = {
    "empty": "没有填写种子网址。",
    "too_many": "一次最多提交 {value} 个种子网址。",
    "spaces": "网址里不能有空格或控制字符：{value}（空格请写成 %20）。",
    "not_http": "不是 http 或 https 网址：{value}",
    "bad_domain": "允许的域名写法不对：{value}（应写成 example.cn、*.example.cn 或 主机:端口）。",
    "private": ("{value} 在本机或内网地址上，本服务没有允许抓取内网。要抓取内网站点，请用 "
                "tansuo serve --allow-private-networks 启动（或设置 TANSUO_CRAWLER_ALLOW_PRIVATE_NETWORKS=true）。"),
}


def seed_error(code: str, value: str) -> str:
    """Why the console did not submit the seeds, from BadSeeds' code and value."""
    return _SEED_MESSAGES.get(code, "种子网址有误，请检查后再提交。").format(value=value)
