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
