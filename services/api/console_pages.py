"""What every page of the operator console beyond its front page shares: the login
check for a GET, the login and CSRF check for a POST, and the refusal page."""

from __future__ import annotations

from flask import redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from services.api import admin_session
from services.api.context import api_context


def logged_in() -> bool:
    ctx = api_context()
    return admin_session.logged_in(ctx.settings, ctx.backends.frontier)


def refuse(code: int, message: str) -> ResponseReturnValue:
    return render_template("admin_message.html", code=code, message=message), code


def must_log_in() -> ResponseReturnValue | None:
    """None for a logged-in session; else the way to the login form (or the refusal
    when the console is off)."""
    if not api_context().settings.api_token:
        return refuse(403, "控制台未启用：请设置 TANSUO_API_TOKEN。")
    if not logged_in():
        return redirect(url_for("admin.console"), code=303)
    return None


def must_post_as_logged_in() -> ResponseReturnValue | None:
    """None for a logged-in session posting its own CSRF token; else the refusal."""
    if not logged_in():
        return refuse(403, "请先登录控制台。")
    if not admin_session.csrf_ok(request.form.get("csrf", "")):
        return refuse(403, "表单已过期（CSRF 令牌不符），请刷新页面后重试。")
    return None
