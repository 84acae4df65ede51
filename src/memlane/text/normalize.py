"""Script handling shared by every layer: Chinese detection and Traditional → Simplified mapping
(OpenCC), so text in either script compares and indexes the same."""

from __future__ import annotations

import re
from functools import lru_cache

CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


@lru_cache(maxsize=1)
def _t2s():
    import opencc

    return opencc.OpenCC("t2s")


def has_cjk(text: str) -> bool:
    return bool(CJK.search(text))


def to_simplified(text: str) -> str:
    return _t2s().convert(text) if CJK.search(text) else text
