"""Page-level robots directives: <meta name="robots"> and the X-Robots-Tag header.

Only noindex and nofollow matter to us; "none" means both. Directives addressed to
another crawler by name ("googlebot: noindex") are not ours to obey.
"""

from __future__ import annotations

from collections.abc import Mapping

from lxml import etree

BOT_NAME = "tansuobot"  # the robots user-agent name we answer to besides "robots"
# X-Robots-Tag directives that carry a value after a colon, unlike "agent: directive".
_VALUED_DIRECTIVES = frozenset({"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"})


def meta_robots(root: etree._Element) -> tuple[bool, bool]:
    """(noindex, nofollow) from <meta name=robots|tansuobot>."""
    noindex = nofollow = False
    for meta in root.iter("meta"):
        if (meta.get("name") or "").strip().lower() in ("robots", BOT_NAME):
            ni, nf = _directives(meta.get("content") or "")
            noindex, nofollow = noindex or ni, nofollow or nf
    return noindex, nofollow


def header_robots(headers: Mapping[str, str]) -> tuple[bool, bool]:
    """(noindex, nofollow) from X-Robots-Tag: "noindex", "none", "tansuobot: nofollow"..."""
    value = next((v for k, v in headers.items() if k.lower() == "x-robots-tag"), "")
    noindex = nofollow = False
    agent = ""
    for part in value.split(","):
        name, colon, rest = part.partition(":")
        if colon and name.strip().lower() not in _VALUED_DIRECTIVES:
            agent, part = name.strip().lower(), rest
        if agent in ("", BOT_NAME):
            ni, nf = _directives(part)
            noindex, nofollow = noindex or ni, nofollow or nf
    return noindex, nofollow


def _directives(content: str) -> tuple[bool, bool]:
    words = {w.strip().lower() for w in content.split(",")}
    none = "none" in words
    return none or "noindex" in words, none or "nofollow" in words
