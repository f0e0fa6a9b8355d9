"""Answer comparison (pure): stored vs replayed answers, and a free-text agent answer vs a gold one.

- number: numeric equality (1e-9 relative), '1,234' and 1234.0 count as 1234;
- string: NFKC, case-folded, whitespace-collapsed equality;
- judge (a list of parts): part by part, each compared as above;
- a COND answer also compares its branch, a CMP answer the counts behind its label.
"""

import math
import re
import unicodedata
from collections.abc import Mapping
from typing import Any

_WS = re.compile(r"\s+")
_NUM = re.compile(r"-?\d[\d,]*(?:\.\d+)?|-?\.\d+")


def norm_text(v: Any) -> str:
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    return _WS.sub(" ", unicodedata.normalize("NFKC", str(v)).casefold()).strip()


def as_number(v: Any) -> float | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int | float):
        return float(v)
    s = str(v).strip().replace(",", "")
    try:
        return float(s)
    except ValueError:
        return None


def same_value(a: Any, b: Any) -> bool:
    """Typed equality of two answer values (scalars or lists of scalars)."""
    if isinstance(a, list | tuple) or isinstance(b, list | tuple):
        if not (isinstance(a, list | tuple) and isinstance(b, list | tuple)) or len(a) != len(b):
            return False
        return all(same_value(x, y) for x, y in zip(a, b, strict=True))
    if a is None or b is None:
        return a is None and b is None
    na, nb = as_number(a), as_number(b)
    if na is not None and nb is not None:
        return math.isclose(na, nb, rel_tol=1e-9, abs_tol=1e-9)
    return norm_text(a) == norm_text(b)


def same_answer(stored: Mapping[str, Any], fresh: Mapping[str, Any]) -> bool:
    """Stored Task answer vs a recomputed one (`answers.compute` shape)."""
    if not same_value(stored.get("value"), fresh.get("value")):
        return False
    if (stored.get("branch") or None) != (fresh.get("branch") or None):
        return False
    if "counts" in stored and "counts" in fresh and not same_value(stored["counts"], fresh["counts"]):
        return False
    return True


def answer_brief(ans: Mapping[str, Any]) -> str:
    """A short text of an answer for verdict details."""
    parts = [f"value={ans.get('value')!r}"]
    if ans.get("branch"):
        parts.append(f"branch={ans['branch']}")
    if ans.get("counts") is not None:
        parts.append(f"counts={ans['counts']}")
    return ", ".join(parts)


def _mentions_number(text: str, x: float) -> bool:
    for m in _NUM.finditer(text):
        n = as_number(m.group(0))
        if n is not None and math.isclose(n, x, rel_tol=1e-6, abs_tol=1e-6):
            return True
    return False


def _mentions_text(text: str, v: Any) -> bool:
    t, s = norm_text(text), norm_text(v)
    if not s:
        return False
    if re.fullmatch(r"[0-9a-z_.\-]+", s):
        return re.search(rf"(?<![0-9a-z]){re.escape(s)}(?![0-9a-z])", t) is not None
    return s in t


def text_matches(gold: Mapping[str, Any], text: str) -> bool:
    """Whether a free-text answer states the gold answer: every part of it, numbers numerically."""
    if not text or not text.strip():
        return False
    value = gold.get("value")
    parts = list(value) if isinstance(value, list | tuple) else [value]
    if not parts or any(p is None for p in parts):
        return False
    for p in parts:
        n = as_number(p)
        if n is not None and not isinstance(p, str):
            if not _mentions_number(text, n):
                return False
        elif n is not None and isinstance(p, str) and re.fullmatch(r"-?[\d,]+(\.\d+)?", p.strip()):
            if not (_mentions_number(text, n) or _mentions_text(text, p)):
                return False
        elif not _mentions_text(text, p):
            return False
    return True
