"""A host's crawl settings over HTTP: the console's page
(``/admin/hosts/<host>/settings``) and the API (``/api/hosts/<host>/settings``), both
over services/scheduler/host_settings.py."""

from __future__ import annotations

import re
import time
from typing import Any

from flask import Blueprint, jsonify, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from services.api import admin_session
from services.api.bearer_auth import requires_token
from services.api.console_pages import must_log_in, must_post_as_logged_in, refuse
from services.api.context import api_context
from services.common.config import Settings
from services.common.domain.host_settings import BadHostSettings, HostSettings
from services.scheduler import host_settings

bp = Blueprint("host_settings", __name__)

# The frontier's host names: host, optional port, IPv6 in brackets; read in lower
# case, since host names are case-insensitive (the contract's pattern allows both).
_HOST = re.compile(r"[a-z0-9._\-\[\]:]{1,262}")
_REASONS = {"not_included": "不符合包含规则", "excluded_pattern": "符合排除规则"}


def _host(raw: str) -> str | None:
    host = raw.lower()
    return host if _HOST.fullmatch(host) else None


def _crawl_wide(cfg: Settings) -> dict[str, Any]:
    return {"include": list(cfg.frontier_include_patterns), "exclude": list(cfg.frontier_exclude_patterns),
            "max_depth": cfg.frontier_max_depth, "delay_s": cfg.frontier_host_delay_s,
            "allow_domains": list(cfg.frontier_allow_domains)}  # fmt: skip


def _page(host: str, settings: HostSettings | None, form: dict[str, str] | None = None, error: str = "",
          message: str = "", code: int = 200) -> ResponseReturnValue:  # fmt: skip
    ctx = api_context()
    state = ctx.backends.frontier
    info = state.get_host(host)
    check = request.args.get("check", "").strip()[:2048]
    verdict = ""
    if check:
        rules = settings or HostSettings()
        reason = rules.rejects(check)
        verdict = f"不会抓取：{_REASONS[reason]}" if reason else "会抓取（按本主机的规则）"
    if form is None:
        s = settings or HostSettings()
        form = {"include": "\n".join(s.include), "exclude": "\n".join(s.exclude),
                "max_depth": "" if s.max_depth is None else str(s.max_depth),
                "delay_s": "" if s.delay_s is None else f"{s.delay_s:g}", "allow_domains": " ".join(s.allow_domains)}  # fmt: skip
    return render_template(
        "admin_host_settings.html", host=host, info=info, settings=settings, form=form, error=error,
        message=message, crawl_wide=_crawl_wide(ctx.settings), csrf=admin_session.csrf_token(), check=check,
        verdict=verdict,
    ), code  # fmt: skip


@bp.get("/admin/hosts/<host>/settings")
def console(host: str) -> ResponseReturnValue:
    """The host's settings as a form, beside the crawl-wide ones."""
    refused = must_log_in()
    if refused is not None:
        return refused
    name = _host(host)
    if name is None:
        return refuse(400, f"主机名写法不对：{host[:80]}")
    settings = api_context().backends.frontier.host_settings().get(name)
    args = request.args
    message = ""
    if args.get("done") == "saved":
        message = (f"已保存。排队中被新规则排除的网址：{args.get('excluded', '0')[:9]} 个；"
                   f"恢复抓取的网址：{args.get('readmitted', '0')[:9]} 个。调度器在几秒内按新设置抓取。")  # fmt: skip
    elif args.get("done") == "reset":
        message = "已清除本主机的设置：改用全局设置。"
    return _page(name, settings, message=message)


@bp.post("/admin/hosts/<host>/settings")
def console_save(host: str) -> ResponseReturnValue:
    """Form fields ``include``, ``exclude`` (one rule a line), ``max_depth``, ``delay_s``,
    ``allow_domains`` and ``action`` (save, or reset to the crawl-wide settings)."""
    refused = must_post_as_logged_in()
    if refused is not None:
        return refused
    name = _host(host)
    if name is None:
        return refuse(400, f"主机名写法不对：{host[:80]}")
    ctx = api_context()
    form = {k: request.form.get(k, "") for k in ("include", "exclude", "max_depth", "delay_s", "allow_domains")}
    now = time.time()
    if request.form.get("action") == "reset":
        host_settings.save(ctx.settings, ctx.backends.frontier, name, None, now)
        return redirect(url_for("host_settings.console", host=name, done="reset"), code=303)
    try:
        settings = host_settings.parse_form(**form, now=now)
    except BadHostSettings as exc:
        return _page(name, ctx.backends.frontier.host_settings().get(name), form=form, error=str(exc), code=400)
    saved = host_settings.save(ctx.settings, ctx.backends.frontier, name, settings, now)
    return redirect(url_for("host_settings.console", host=name, done="saved", excluded=saved.excluded,
                            readmitted=saved.readmitted), code=303)  # fmt: skip


def _answer(host: str, saved: host_settings.Saved | None = None) -> ResponseReturnValue:
    ctx = api_context()
    settings = ctx.backends.frontier.host_settings().get(host)
    body: dict[str, Any] = {"host": host, "settings": None if settings is None else settings.to_dict(),
                            "crawl_wide": _crawl_wide(ctx.settings)}  # fmt: skip
    if saved is not None:
        body.update(excluded=saved.excluded, readmitted=saved.readmitted, delay_s=saved.delay_s)
    return jsonify(body)


@bp.get("/api/hosts/<host>/settings")
@requires_token("crawl settings")
def api_get(host: str) -> ResponseReturnValue:
    """The host's crawl settings (null: the crawl-wide ones apply) and the crawl-wide ones."""
    name = _host(host)
    if name is None:
        return jsonify(error=f"not a host name: {host[:80]!r}"), 400
    return _answer(name)


@bp.put("/api/hosts/<host>/settings")
@requires_token("crawl settings")
def api_put(host: str) -> ResponseReturnValue:
    """Body: the settings (``include``, ``exclude``, ``max_depth``, ``delay_s``,
    ``allow_domains``), replacing the host's; the queue is brought in line at once."""
    name = _host(host)
    if name is None:
        return jsonify(error=f"not a host name: {host[:80]!r}"), 400
    body = request.get_json(silent=True)
    if not isinstance(body, dict):
        return jsonify(error="the body must be a JSON object of settings"), 400
    unknown = set(body) - {"include", "exclude", "max_depth", "delay_s", "allow_domains"}
    if unknown:
        return jsonify(error=f"unknown settings: {', '.join(sorted(unknown))[:200]}"), 400
    now = time.time()
    try:
        settings = host_settings.checked(HostSettings.from_dict({**body, "updated_at": now}))
    except BadHostSettings as exc:
        return jsonify(error=str(exc)), 400
    return _answer(name, host_settings.save(api_context().settings, api_context().backends.frontier, name, settings, now))


@bp.delete("/api/hosts/<host>/settings")
@requires_token("crawl settings")
def api_delete(host: str) -> ResponseReturnValue:
    """Back to the crawl-wide settings."""
    name = _host(host)
    if name is None:
        return jsonify(error=f"not a host name: {host[:80]!r}"), 400
    ctx = api_context()
    return _answer(name, host_settings.save(ctx.settings, ctx.backends.frontier, name, None, time.time()))
