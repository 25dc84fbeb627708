"""The operator's dictionaries over HTTP: the console's page (``/admin/dictionaries``)
and the API (``/api/dictionaries``), both over services/dictionaries/editing.py."""

from __future__ import annotations

import logging
import time

from flask import Blueprint, jsonify, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from services.api import admin_session
from services.api.bearer_auth import requires_token
from services.api.console_pages import must_log_in, must_post_as_logged_in, refuse
from services.api.context import api_context
from services.common.analysis import segment
from services.common.analysis.stop_words import STOP_WORDS
from services.common.analysis.synonyms import synonyms
from services.common.domain.dictionaries import NAMES
from services.common.errors import BadInput
from services.dictionaries import editing

log = logging.getLogger(__name__)

bp = Blueprint("dictionaries", __name__)

TITLES = {"user_words": "用户词典", "synonyms": "同义词", "stop_words": "停用词"}
_TRY_CHARS = 200
_DONE = {"saved": "已保存{name}，已在本服务生效；其他进程在 {s:g} 秒内生效。", "reset": "{name}已恢复为内置默认值。",
         "reanalysis": "已请求重新切分已收录的网页：由索引器在后台执行。"}  # fmt: skip


def _try(text: str) -> list[tuple[str, tuple[str, ...], bool]]:
    """(word, its synonyms, whether it is a stop word) of each word of ``text``."""
    return [(w, synonyms(w), w in STOP_WORDS) for w in segment(text[:_TRY_CHARS])]


@bp.get("/admin/dictionaries")
def console() -> ResponseReturnValue:
    """The three dictionaries, where each entry comes from, what reading them found, the
    reanalysis, and a box to try how a text is split."""
    refused = must_log_in()
    if refused is not None:
        return refused
    ctx = api_context()
    try:
        state = editing.status(ctx.backends.dictionaries, ctx.dictionaries)
    except Exception as exc:  # the store away (BackendUnavailable) or unreadable (sqlite3.Error)
        log.warning("dictionaries: cannot read the store: %s", exc)
        return refuse(503, "词典存储暂时无法读取，请稍后再试。")
    done = request.args.get("done", "")
    name = request.args.get("name", "")
    message = _DONE[done].format(name=TITLES.get(name, ""), s=ctx.settings.analysis_refresh_s) if done in _DONE else ""
    sample = request.args.get("try", "").strip()
    return render_template(
        "admin_dictionaries.html", names=NAMES, titles=TITLES, state=state, csrf=admin_session.csrf_token(),
        message=message, sample=sample[:_TRY_CHARS], tried=_try(sample) if sample else [],
        refresh_s=ctx.settings.analysis_refresh_s,
    )  # fmt: skip


@bp.post("/admin/dictionaries/<name>")
def console_save(name: str) -> ResponseReturnValue:
    """Form fields ``text`` and ``action`` (save, or reset to the defaults)."""
    refused = must_post_as_logged_in()
    if refused is not None:
        return refused
    ctx = api_context()
    action = request.form.get("action", "save")
    if name not in NAMES or action not in ("save", "reset"):
        return refuse(400, f"没有这个词典或操作：{name[:40]} / {action[:20]}")
    try:
        if action == "reset":
            editing.reset(ctx.backends.dictionaries, ctx.dictionaries, name)
        else:
            editing.save(ctx.backends.dictionaries, ctx.dictionaries, name, request.form.get("text", ""), time.time())
    except BadInput:
        return refuse(400, f"词典太大：最多 {editing.MAX_TEXT_BYTES // (1024 * 1024)} MiB。")
    done = "reset" if action == "reset" else "saved"
    return redirect(url_for("dictionaries.console", done=done, name=name, _anchor=name), code=303)


@bp.post("/admin/reanalysis")
def console_reanalysis() -> ResponseReturnValue:
    """Ask for every indexed page to be split again with the user words in use."""
    refused = must_post_as_logged_in()
    if refused is not None:
        return refused
    ctx = api_context()
    editing.request_reanalysis(ctx.backends.dictionaries, ctx.dictionaries, time.time())
    return redirect(url_for("dictionaries.console", done="reanalysis", _anchor="reanalysis"), code=303)


@bp.get("/api/dictionaries")
@requires_token("dictionaries")
def api_status() -> ResponseReturnValue:
    """Every dictionary's sources and problems, and the reanalysis."""
    ctx = api_context()
    return jsonify(editing.status_json(editing.status(ctx.backends.dictionaries, ctx.dictionaries)))


@bp.put("/api/dictionaries/<name>")
@requires_token("dictionaries")
def api_save(name: str) -> ResponseReturnValue:
    """Body ``{"text": "..."}``: the dictionary's new text, replacing the saved one."""
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or not isinstance(body.get("text"), str):
        return jsonify(error='the body must be a JSON object {"text": "..."}'), 400
    ctx = api_context()
    try:
        parsed = editing.save(ctx.backends.dictionaries, ctx.dictionaries, name, body["text"], time.time())
    except editing.UnknownDictionary as exc:
        return jsonify(error=str(exc)), 404
    except BadInput as exc:
        return jsonify(error=str(exc)), 400
    return jsonify(name=name, entries=parsed.entries, problems=editing.problem_json(parsed.problems))


@bp.delete("/api/dictionaries/<name>")
@requires_token("dictionaries")
def api_reset(name: str) -> ResponseReturnValue:
    """Back to the shipped defaults."""
    ctx = api_context()
    try:
        editing.reset(ctx.backends.dictionaries, ctx.dictionaries, name)
    except editing.UnknownDictionary as exc:
        return jsonify(error=str(exc)), 404
    return jsonify(name=name, defaults=True)


@bp.post("/api/reanalysis")
@requires_token("dictionaries")
def api_reanalysis() -> ResponseReturnValue:
    """Split every indexed page again with the user words in use (done by the indexer)."""
    ctx = api_context()
    job = editing.request_reanalysis(ctx.backends.dictionaries, ctx.dictionaries, time.time())
    return jsonify(editing.status_json(editing.status(ctx.backends.dictionaries, ctx.dictionaries))["reanalysis"]
                   or {"job_id": job.job_id}), 202  # fmt: skip
