"""What a conversation's chain found along the way, named in the final reply (blind read s10).

A verified answer sentence restates the question with the number ("창성동이 속한 시군구들의 읍면동은 150곳입니다.")
and never names the things the chain went through (종로구 and 군산시). The oracle's episode holds the tool results,
so the reply can name them: a value an earlier call returned and a later call received (a district code, an
album id) is looked up in the earlier call's records, and the record's name field for that value is said after
the answer ("해당 시군구는 종로구, 군산시입니다."). Only names the conversation has not said yet are added, only a
name field that belongs to the matched value (`sigunguCd` → `sigunguNm`; `Name` only when the value is the
record's own id, its first field), and only a few (a long list reads as a dump).
"""

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from factory import prompts
from factory.io import dumps
from factory.llm.simulator import mentions_value

FOUND_TEMPLATE = "conversations/found.{lang}"
MAX_NAMES = 3
_NAME_KEY = re.compile(r"(?:name|title|nm)$", re.I)
_ID_SUFFIX = re.compile(r"(?:_?id|_?cd|_?code)$", re.I)


def _records(content: str) -> list[dict[str, Any]]:
    try:
        payload = json.loads(content)
    except (TypeError, ValueError):
        return []
    recs = payload.get("records") if isinstance(payload, dict) else None
    return [r for r in recs if isinstance(r, dict)] if isinstance(recs, list) else []


def results_by_call(episode: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """dumps([tool, args]) → the records its successful call returned in the episode."""
    contents = {m.get("tool_call_id"): str(m.get("content") or "") for m in episode.get("messages") or []
                if m.get("role") == "tool"}  # fmt: skip
    out: dict[str, list[dict[str, Any]]] = {}
    for c in episode.get("calls") or []:
        if c.get("ok"):
            out.setdefault(dumps([c["tool"], c.get("args") or {}]), _records(contents.get(c.get("call_id"), "")))
    return out


def _name_for(record: Mapping[str, Any], key: str) -> str | None:
    """The name the record gives for the value in `key`: the name field of the same stem (sigunguCd → sigunguNm),
    or the record's own name when `key` is its first field (its id)."""
    stem = _ID_SUFFIX.sub("", key).casefold()
    names = [k for k in record if _NAME_KEY.search(k)]
    own = [k for k in names if stem and k.casefold().startswith(stem)]
    if not own and list(record)[:1] == [key]:
        own = [k for k in names if _ID_SUFFIX.sub("", _NAME_KEY.sub("", k)) == ""] or names[:1]
    for k in own:
        v = record.get(k)
        if isinstance(v, str) and v.strip():
            last = next((record[x] for x in record if _LAST_NAME.fullmatch(x) and isinstance(record[x], str)), "")
            # a person by their whole name ('The customer is Bjørn Hansen.', not '… is Bjørn.': s16 scaled run)
            return f"{v.strip()} {last.strip()}".strip() if _FIRST_NAME.fullmatch(k) else v.strip()
    return None


_FIRST_NAME = re.compile(r"first_?name", re.IGNORECASE)
_LAST_NAME = re.compile(r"last_?name", re.IGNORECASE)


def found_names(
    conv: Mapping[str, Any], episode: Mapping[str, Any], said: str
) -> tuple[tuple[str, str] | None, list[str]]:
    """((tool, param) that received the found things, their names) for the things the chain found along the way
    that `said` (the conversation's text so far) does not name; (None, []) when there are none or too many."""
    calls = list(conv.get("golden_calls") or [])
    steps = sorted({c["step"] for c in calls})
    if len(steps) < 2:
        return None, []
    results = results_by_call(episode)
    target: tuple[str, str] | None = None
    names: list[str] = []
    named: dict[tuple[str, str], set[str]] = {}  # (tool, param) → every name found for the values it received
    for c in calls:
        if c["step"] == steps[-1]:
            continue
        records = results.get(dumps([c["name"], c.get("args") or {}])) or []
        for d in calls:
            if d["step"] <= c["step"]:
                continue
            for param, value in (d.get("args_subset") or {}).items():
                for r in records:
                    key = _key_for(r, param, value)
                    name = _name_for(r, key) if key is not None else None
                    if name and name != str(value):
                        named.setdefault((d["name"], param), set()).add(name)
                    if name and name != str(value) and not mentions_value(said, name) and name not in names:
                        target = target or (d["name"], param)
                        names.append(name)
    if target is not None and len(names) < len(named.get(target, ())):  # one of two albums already said: 'The
        return None, []  # album is Core.' would not say which
    searched = {a.get("tool") for a in conv.get("golden_actions") or [] if a.get("source_type") == "retrieval"}
    if not names:  # a name the chain found in a passage or a record and sent on ('송파구' looked up for its code)
        for d in calls:
            if d["step"] == steps[0] or d["name"] in searched:  # a document search's query is no name
                continue
            for param, value in (d.get("args_subset") or {}).items():
                if _is_name(value) and not mentions_value(said, value) and value not in names:
                    target = target or (d["name"], param)
                    names.append(value)
    if not names or len(names) > MAX_NAMES:
        return None, []
    return target, names


def _key_for(record: Mapping[str, Any], param: str, value: Any) -> str | None:
    """The record's field that holds the value a later call received as `param`: the field of that name, else one
    of the same stem (albumId for album_id), else the first field holding it. Track 3 is on album 3, so the first
    field holding 3 would name the track where the album was meant (s17 demo: 'Fast As a Shark')."""
    holding = [k for k, x in record.items() if str(x) == str(value)]
    stem = _ID_SUFFIX.sub("", param).replace("_", "").casefold()
    same = [k for k in holding if k == param or (stem and _ID_SUFFIX.sub("", k).replace("_", "").casefold() == stem)]
    return next(iter(same or holding), None)


def searched_subject(conv: Mapping[str, Any], episode: Mapping[str, Any], said: str) -> tuple[str, str] | None:
    """(noun, name) of the record a document search was about, when an earlier call of the chain returned it and the
    conversation has not named it: the search for 'Accept (artist)' after a track search whose record says
    `artist_name: Accept` is about the artist Accept (s17 demo: 'Customers from 4 countries have bought tracks by
    the artist who recorded 'Balls to the Wall'.' never said who). The noun is the name field's stem (artist_name →
    artist); a bare 'name' or 'title' field names no kind and gives None."""
    searched = {a.get("tool") for a in conv.get("golden_actions") or [] if a.get("source_type") == "retrieval"}
    calls = list(conv.get("golden_calls") or [])
    results = results_by_call(episode)
    for d in calls:
        query = str((d.get("args_subset") or {}).get("query") or "")
        if d["name"] not in searched or not query:
            continue
        for c in calls:
            if c["step"] >= d["step"]:
                continue
            for r in results.get(dumps([c["name"], c.get("args") or {}])) or []:
                for k, v in r.items():
                    noun = _NAME_KEY.sub("", k).rstrip("_").casefold()
                    if not noun or not _NAME_KEY.search(k) or not isinstance(v, str) or not v.strip():
                        continue
                    if (query == v or query.startswith(v + " ")) and not mentions_value(said, v):
                        return noun, v
    return None


def _is_name(value: Any) -> bool:
    """A value that reads as a name (letters, not a code or a number)."""
    if not isinstance(value, str) or len(value) > 40 or len(value.split()) > 3:
        return False
    return bool(re.search(r"[^\W\d_]{2}", value)) and not re.fullmatch(r"[A-Z0-9_-]+", value)


def found_sentence(language: str, noun: str, names: Sequence[str]) -> str:
    """The sentence naming what the chain found ('The album is Revelations.', '해당 시군구는 종로구, 군산시입니다.')."""
    text = prompts.render(FOUND_TEMPLATE.format(lang=language), noun=noun, names=list(names))
    return " ".join(text.split())
