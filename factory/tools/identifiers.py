"""Words of identifiers (`trackId`, `album_title`, `list_airports`): shared by value types
(factory.semtypes) and argument discovery (factory.tools.argvalues), which may not import each other."""

import re

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Za-z])(?=[0-9])|(?<=[0-9])(?=[A-Za-z])")


def words(name: str) -> list[str]:
    """Lower-case words of an identifier: camelCase, snake_case, digits split; the last dotted part."""
    tail = name.rsplit(".", 1)[-1]
    return [w.lower() for w in re.split(r"[^0-9A-Za-z가-힣]+", _CAMEL.sub(" ", tail)) if w]


def singular(word: str) -> str:
    """The singular of an English plural noun by its ending (`categories` → `category`), else the word."""
    if word in ("status", "news", "bus", "gas", "series", "species"):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://[^\s]+$")
_ID_SEGMENT = re.compile(r"^(?=[\w-]*\d)[\w-]{1,64}$")  # a path segment holding a digit: 12, item-7, a1b2c3


def _uri_parts(value: object) -> tuple[list[str], str] | None:
    """(the words before the last path segment: scheme host and path, the last segment) of a URI."""
    if not isinstance(value, str) or not _URI.match(value.strip()):
        return None
    from urllib.parse import unquote, urlsplit

    parts = urlsplit(value.strip())
    segments = [unquote(s) for s in parts.path.split("/") if s]
    if not segments:
        return None
    before = [w for seg in [parts.netloc, *segments[:-1]] for w in words(seg)]
    return before, segments[-1]


def uri_id(value: object) -> int | str | None:
    """The id a URI ends with (``test://static/resource/12`` → 12; ``demo://items/ab-12`` → 'ab-12'):
    its last path segment when that holds a digit (an integer when it is only digits), else None."""
    parts = _uri_parts(value)
    if parts is None or not _ID_SEGMENT.match(parts[1]):
        return None
    last = parts[1]
    return int(last) if last.isdigit() else last


def uri_words(value: object) -> set[str]:
    """The words of a URI's host and path before its last segment, singular (``demo://resource/dynamic/
    text/2`` → {demo, resource, dynamic, text}); empty for a value that is not a URI."""
    parts = _uri_parts(value)
    return {singular(w) for w in parts[0]} if parts is not None else set()
