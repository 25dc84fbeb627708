"""Cluster dictionary store: the operator's dictionaries and the reanalysis job in Redis
(TANSUO_STATE), under one hash tag (``P{dict}:``): ``texts`` hash (name -> JSON of the
text and when it was saved), ``version`` counter, ``job`` hash (the ReanalysisJob's
fields). The job's claim and updates are Lua scripts, so racing indexers agree."""

from __future__ import annotations

import dataclasses
import json
import uuid
from typing import Any

import redis
from redis.cluster import RedisCluster

from services.common.adapters.redis.connection import DEFAULT_PREFIX, connect, ping, translate_errors
from services.common.domain.dictionaries import EditedText, ReanalysisJob

# ARGV: owner, now, stale_s. The job's fields after the claim, or nothing.
_CLAIM = """
local f = redis.call('HMGET', KEYS[1], 'state', 'owner', 'heartbeat_at')
if not f[1] then return {} end
local now = tonumber(ARGV[2])
if f[1] == 'pending' or (f[1] == 'running' and (f[2] == ARGV[1] or now - tonumber(f[3]) >= tonumber(ARGV[3]))) then
  redis.call('HSET', KEYS[1], 'state', 'running', 'owner', ARGV[1], 'heartbeat_at', ARGV[2])
  return redis.call('HGETALL', KEYS[1])
end
return {}
"""
# ARGV: job_id, owner, then field, value pairs. 1 if written.
_UPDATE = """
local f = redis.call('HMGET', KEYS[1], 'job_id', 'owner', 'state')
if f[1] ~= ARGV[1] or f[2] ~= ARGV[2] or (f[3] ~= 'pending' and f[3] ~= 'running') then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
return 1
"""
_FIELDS = {f.name: f.type for f in dataclasses.fields(ReanalysisJob)}


def _pairs(job: ReanalysisJob) -> list[Any]:
    return [x for name, value in dataclasses.asdict(job).items() for x in (name, repr(value) if isinstance(value, float) else value)]


def _job(row: dict[str, str] | list[str]) -> ReanalysisJob | None:
    if isinstance(row, list):
        row = dict(zip(row[::2], row[1::2], strict=True))
    if not row:
        return None
    values: dict[str, Any] = {}
    for name, kind in _FIELDS.items():
        raw = row.get(name, "")
        values[name] = float(raw or 0) if kind == "float" else int(raw or 0) if kind == "int" else raw
    return ReanalysisJob(**values)


class RedisDictionaryStore:
    def __init__(self, client: redis.Redis | RedisCluster, prefix: str = f"{DEFAULT_PREFIX}:", where: str = "redis") -> None:
        self._r: Any = client  # decode_responses=True: every reply is str
        self._base = f"{prefix}{{dict}}:"
        self._where = where
        self._claim = client.register_script(_CLAIM)
        self._update = client.register_script(_UPDATE)

    @classmethod
    def from_url(cls, url: str) -> RedisDictionaryStore:
        target = connect(url)
        return cls(target.client, target.prefix, target.where)

    @translate_errors
    def version(self) -> str:
        return str(self._r.get(f"{self._base}version") or "0")

    @translate_errors
    def load(self) -> dict[str, EditedText]:
        out = {}
        for name, value in self._r.hgetall(f"{self._base}texts").items():
            data = json.loads(value)
            out[name] = EditedText(name, data["text"], float(data["saved_at"]))
        return out

    @translate_errors
    def save(self, name: str, text: str, now: float) -> None:
        self._r.hset(f"{self._base}texts", name, json.dumps({"text": text, "saved_at": now}, ensure_ascii=False))
        self._r.incr(f"{self._base}version")  # after the text: a reader that sees it finds the text

    @translate_errors
    def remove(self, name: str) -> None:
        self._r.hdel(f"{self._base}texts", name)
        self._r.incr(f"{self._base}version")

    @translate_errors
    def request_reanalysis(self, now: float, user_words: str) -> ReanalysisJob:
        job = ReanalysisJob(uuid.uuid4().hex[:12], now, "pending", user_words=user_words)
        self._r.hset(f"{self._base}job", mapping=dict(zip(_pairs(job)[::2], _pairs(job)[1::2], strict=True)))
        return job

    @translate_errors
    def reanalysis(self) -> ReanalysisJob | None:
        return _job(self._r.hgetall(f"{self._base}job"))

    @translate_errors
    def claim_reanalysis(self, owner: str, now: float, stale_s: float) -> ReanalysisJob | None:
        return _job(self._claim(keys=[f"{self._base}job"], args=[owner, repr(float(now)), repr(float(stale_s))]))

    @translate_errors
    def update_reanalysis(self, job: ReanalysisJob) -> bool:
        return bool(self._update(keys=[f"{self._base}job"], args=[job.job_id, job.owner, *_pairs(job)]))

    @translate_errors
    def ping(self) -> None:
        ping(self._r)

    def close(self) -> None:
        self._r.close()
