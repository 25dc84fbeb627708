"""Which characters are Han: one definition for folding, segmentation, bigrams and the
query planner, so that they never disagree about where a Chinese run starts."""

from __future__ import annotations

import re

# CJK Unified Ideographs, Extension A, Compatibility Ideographs and the
# supplementary planes (Extensions B and later).
HAN = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0003134f"
HAN_RUN = re.compile(f"[{HAN}]+")


def has_han(text: str) -> bool:
    return HAN_RUN.search(text) is not None
