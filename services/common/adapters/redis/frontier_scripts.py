"""Lua scripts of the Redis frontier state (their text in lua/frontier_*.lua); the key
layout is described in frontier.py.

Each script runs atomically inside Redis on the keys of one shard, all of them passed in
KEYS, so it runs unchanged on one Redis and on Redis Cluster (where every key of a shard
carries the shard's hash tag, and so lives in one slot). The calling convention:

- KEYS: the shard's keys in ``SHARD_KEYS`` order, then four keys per host the call is
  about (its hash, its robots.txt, its URL records, its queue), in the order of
  ARGV's host names.
- ARGV[1] is the number of hosts H, ARGV[2..H+1] their names, and the script's own
  arguments start at ARGV[H+2] (``A`` in the scripts).

Selections (which hosts may be leased, which leases expired) read an index first and
then call a script with the keys of the hosts found; every script checks again what
it was told, so a host or URL that changed in between is skipped, never mishandled.

A URL record is one string, its fields joined by \\31 (``RECORD_FIELDS`` order, empty
trailing fields left out; an empty field is SQL's NULL). A queue member is the URL's
level (a byte, 0 for sitemaps and 1 for pages, then the depth as 4 bytes), its due_at
as an 8-byte big-endian double, then the URL: all members score 0, so ZRANGEBYLEX
walks a host's queue in SQL's ORDER BY kind = 'page', depth, due_at with due_at exact.

Numbers cross the Python/Lua boundary as strings: Python sends ``repr(float)`` and Lua
writes computed floats with ``%.17g``, so a stored time reads back as the same double
(Lua's own ``tostring`` keeps 14 digits, which would move a politeness deadline).
"""

from __future__ import annotations

from services.common.adapters.redis.lua_files import lua_script

# The shard's keys, passed first in KEYS by every script (names after the shard tag).
SHARD_KEYS = (
    "hosts",  # zset: every host, score -queued (hosts() order)
    "ready",  # zset: hosts with robots.txt ready and a URL due, score next_allowed_at
    "robots",  # zset: hosts needing robots.txt, nothing in flight, score next_allowed_at
    "parked",  # zset: hosts of either index kept out until their score (blocked_until, or the first due_at)
    "blocked",  # zset: every host with blocked_until > 0, score blocked_until
    "rttl",  # zset: hosts with robots ready, score robots_fetched_at
    "claims",  # zset: hosts whose robots.txt is being fetched, score claim time
    "leased",  # zset: every leased URL, score leased_at
    "recrawl",  # zset: every done or failed URL, score due_at
    "dues",  # zset: every due_at some queued URL has, as text and score
    "duecount",  # hash: due_at text -> queued URLs due then
    "n",  # hash: URLs per state (q l d f x), hosts fetching robots.txt (rf), pages fetched
    "minutes",  # hash: minute (epoch s // 60) -> pages fetched
)
HOST_KEYS = ("h", "r", "u", "q")  # hash, robots.txt string, URL records, queue

# Positions (1-based, as in Lua) of a URL record's fields.
RECORD_FIELDS = (
    "state", "depth", "kind", "due_at", "fail_count", "note", "lease_id",
    "fetched_at", "status", "content_hash", "etag", "last_modified", "interval_s",
)  # fmt: skip
STATE_LETTERS = {"queued": "q", "leased": "l", "done": "d", "failed": "f", "excluded": "x"}

# The scripts, in lua/: each begins with the prelude (key names, record and queue helpers).
_PRELUDE = lua_script("frontier_prelude.lua")
ENSURE_HOST = _PRELUDE + lua_script("frontier_ensure_host.lua")
GET_HOSTS = _PRELUDE + lua_script("frontier_get_hosts.lua")
PICK_INFO = _PRELUDE + lua_script("frontier_pick_info.lua")
PICK_FIELDS = ("robots_state", "inflight", "blocked_until", "queued", "delay_s", "paused", "next_allowed_at",
               "robots_retry_at", "due")  # fmt: skip
PROMOTE = _PRELUDE + lua_script("frontier_promote.lua")
CLAIM_ROBOTS = _PRELUDE + lua_script("frontier_claim_robots.lua")
EXPIRE_ROBOTS_CLAIMS = _PRELUDE + lua_script("frontier_expire_robots_claims.lua")
EXPIRE_ROBOTS = _PRELUDE + lua_script("frontier_expire_robots.lua")
UPDATE_HOST = _PRELUDE + lua_script("frontier_update_host.lua")
ADD_URLS = _PRELUDE + lua_script("frontier_add_urls.lua")
REQUEUE = _PRELUDE + lua_script("frontier_requeue.lua")
LEASE = _PRELUDE + lua_script("frontier_lease.lua")
FINISH = _PRELUDE + lua_script("frontier_finish.lua")
UNLEASE = _PRELUDE + lua_script("frontier_unlease.lua")
EXPIRE_LEASES = _PRELUDE + lua_script("frontier_expire_leases.lua")
DROP_QUEUED = _PRELUDE + lua_script("frontier_drop_queued.lua")
SWEEP_RECRAWL = _PRELUDE + lua_script("frontier_sweep_recrawl.lua")
UPCOMING = _PRELUDE + lua_script("frontier_upcoming.lua")
NOTE_FETCHED = _PRELUDE + lua_script("frontier_note_fetched.lua")
SET_PAUSED = _PRELUDE + lua_script("frontier_set_paused.lua")
RECRAWL_URLS = _PRELUDE + lua_script("frontier_recrawl_urls.lua")
READMIT = _PRELUDE + lua_script("frontier_readmit.lua")
