"""The operator console at /admin: server-rendered pages over the same frontier state,
reports and actions as `tansuo frontier`, `tansuo report`, `tansuo seed` and
`tansuo host`; a login with the API token (admin_session.py) instead of a header.

Every change is a POST with this session's CSRF token, answered with a redirect
(303) back to the console, so reloading the page never repeats an action.
"""

from __future__ import annotations

from flask import Blueprint, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from services.api import admin_session
from services.api.admin_overview import overview
from services.api.console_pages import logged_in, must_post_as_logged_in, refuse
from services.api.console_words import zh
from services.api.context import api_context
from services.api.index_documents import index_documents
from services.api.ui_messages import seed_error
from services.common.config import Settings
from services.scheduler import host_actions
from services.scheduler.seed_submission import BadSeeds, PrivateSeed, seed_request, submit

bp = Blueprint("admin", __name__)
bp.add_app_template_filter(zh, "zh")

# What a finished action says at the top of the page; anything else in ?done= is ignored.
DONE_MESSAGES = {
    "pause": "已暂停 {host}：不再抓取，直到恢复。",
    "resume": "已恢复 {host}：到期的网址将继续抓取。",
    "recrawl": "{host} 的 {n} 个网址现在到期，将重新抓取。",
    "purge": "已从索引删除 {host} 的 {n} 个网址（由索引器执行），并暂停该主机。",
    "seeds": "已提交 {n} 个种子网址。",
}
# Actions that take a second, explicit step: a purge drops the host's pages from the index.
CONFIRMED = frozenset({"purge"})
_SPLIT = str.maketrans({",": " ", "，": " ", "\r": " ", "\n": " ", "\t": " "})


def _settings() -> Settings:
    return api_context().settings


def _done_message() -> str:
    template = DONE_MESSAGES.get(request.args.get("done", ""))
    if template is None:
        return ""
    return template.format(host=request.args.get("host", "")[:253], n=request.args.get("n", "0")[:12])


@bp.get("/admin")
def console() -> ResponseReturnValue:
    """The console when logged in, else the login form."""
    if not _settings().api_token:
        return render_template("admin_login.html", disabled=True, error=""), 403
    if not logged_in():
        return render_template("admin_login.html", disabled=False, error="")
    backends = api_context().backends
    view = overview(backends.frontier, links=backends.link_graph, documents=index_documents(backends.index))
    return render_template(
        "admin.html", view=view, csrf=admin_session.csrf_token(), message=_done_message(), actions=host_actions.ACTIONS
    )


@bp.post("/admin/login")
def login() -> ResponseReturnValue:
    """Form field ``token``: the API token."""
    ctx = api_context()
    cfg = ctx.settings
    if not cfg.api_token:
        return render_template("admin_login.html", disabled=True, error=""), 403
    client = request.remote_addr or ""
    if wait_s := ctx.auth_failures.wait_s(client):
        retry_after = ctx.auth_failures.refused(client, request.path, wait_s)
        error = f"错误次数过多，请 {retry_after} 秒后再试。"
        return render_template("admin_login.html", disabled=False, error=error), 429, {"Retry-After": retry_after}
    if not admin_session.log_in(cfg, request.form.get("token", "").strip(), ctx.backends.frontier):
        ctx.auth_failures.failed(client, request.path)
        return render_template("admin_login.html", disabled=False, error="令牌不对。"), 401
    return redirect(url_for("admin.console"), code=303)


@bp.post("/admin/logout")
def logout() -> ResponseReturnValue:
    """Ends the session, and every other (harmless without a CSRF token: at worst a
    forced logout)."""
    admin_session.log_out(_settings(), api_context().backends.frontier)
    return redirect(url_for("admin.console"), code=303)


@bp.post("/admin/seeds")
def seeds() -> ResponseReturnValue:
    """Form fields ``urls`` and ``allow_domains``, separated by spaces, commas or lines."""
    refused = must_post_as_logged_in()
    if refused is not None:
        return refused
    urls = request.form.get("urls", "").translate(_SPLIT).split()
    domains = request.form.get("allow_domains", "").translate(_SPLIT).split()
    try:
        req = seed_request(urls, domains, source="console",
                           allow_private_networks=_settings().crawler_allow_private_networks)  # fmt: skip
    except BadSeeds as exc:
        return refuse(403 if isinstance(exc, PrivateSeed) else 400, f"种子未提交：{seed_error(exc.code, exc.value)}")
    submit(api_context().backends.bus, req)
    return redirect(url_for("admin.console", done="seeds", n=len(req.urls)), code=303)


@bp.post("/admin/hosts/<host>")
def host_action(host: str) -> ResponseReturnValue:
    """Form field ``action``: pause, resume, recrawl or purge."""
    refused = must_post_as_logged_in()
    if refused is not None:
        return refused
    action = request.form.get("action", "")
    if action not in host_actions.ACTIONS:
        return refuse(400, f"未知操作：{action[:40]!r}")
    if action in CONFIRMED and request.form.get("confirm", "") != host:
        # Removing a host's pages cannot be undone: one click only asks, a second,
        # on a page of its own, does it.
        return render_template("admin_confirm.html", host=host, action=action, csrf=admin_session.csrf_token())
    backends = api_context().backends
    try:
        result = host_actions.run_action(backends.frontier, lambda: backends.bus, host, action)
    except host_actions.UnknownHost:
        return refuse(404, f"抓取队列中没有主机 {host!r}。")
    return redirect(url_for("admin.console", done=action, host=host, n=result.urls), code=303)
