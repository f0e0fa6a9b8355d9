"""Error-recovery conversations (issue 19 item 5): a call that fails for a reason the agent can fix, its real
error result, then the corrected call and its result, as training conversations.

The wrong call is taken, in this order, from
- `probe`: a failure the tool probes observed on the same tool (a wrong argument value the server refused: the
  probe row's arguments and its recorded error detail), the failing values put in place of the golden ones;
- `unconverted`: the value the user gave passed straight to a later call that needs what an earlier call looks
  up from it (the ICAO code 'KLGA' where the weather tool takes the IATA 'LGA', '대구광역시' where a 시도 code goes):
  the agent skips the lookup, the tool refuses, the agent looks it up and calls again (the wrong call comes first);
- `wrong_type`: an integer id given as the name the user said (the name where the id goes, as agents often do),
  tried before the lookup that gives the id: once the agent has the id (search_artists said artist_id 2), passing
  'Accept' is no slip a capable model makes (blind read s12 #10), so the wrong call comes first and the
  corrected calls use what the lookup returned;
- `missing_argument`: a required argument of a golden call of several arguments left out (a structural error
  the tool's schema check reports; a call left with no argument at all is no slip an agent makes).

The variant is executed for real in the oracle audit (`build`): it is published only when the wrong call came
back as a failure with an error text and the corrected calls then reached the goal; otherwise the conversation
stays as it was. A typo of a value the user has just given ('CJJ' → 'CJJJ', 27 → 277) is no failure a good
assistant makes (blind read s11): it is not offered, and a conversation with no plausible failure gets no copy.
A share of each split's tool-calling conversations is turned into recovery conversations
(`conversations.error_recovery_share`; train only by default: a benchmark scores the agent, not a trace).
"""

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from factory.io import dumps
from factory.llm.simulator import spoken_place

RECOVERY_KINDS = ("probe", "unconverted", "wrong_type", "missing_argument")
RECOVERABLE = ("single", "sequential", "parallel")  # the case kinds whose golden calls a recovery precedes
_FIXABLE = ("schema_mismatch", "missing_field")  # probe outcomes a different argument value fixes
Failures = Mapping[tuple[str, str], Sequence[Mapping[str, Any]]]  # (platform, tool) → failed probe rows


def probe_failures(probes: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The probe rows of every domain whose call failed for its argument values, per (platform, tool)."""
    out: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for value in probes.values():
        for r in value.get("rows") or []:
            if r.get("outcome") in _FIXABLE and isinstance(r.get("args"), Mapping):
                out.setdefault((str(r.get("platform")), str(r.get("tool"))), []).append(dict(r))
    return out


_CODE = re.compile(r"[A-Z0-9-]{1,8}")  # a code or a number, not a name
_ID_PARAM = re.compile(r"(?:id|Id|ID|cd|Cd|CD|code|Code|_no|No)$")  # parameters that take an identifier


EntityOf = Callable[[str, str, str], str | None]  # (platform, tool, param) → the entity its value names


def recovery_variants(
    conv: Mapping[str, Any],
    failures: Failures,
    required: Mapping[str, Sequence[str]],
    entity_of: EntityOf | None = None,
) -> list[dict[str, Any]]:
    """Every way to put one failing call before the first corrected one, in order of preference (`probe`,
    `wrong_type`, `missing_argument`, earlier calls first; at most one per kind). `required`: tool name → its
    required (non-generic) parameters. `entity_of`: what a parameter's value names (the lexicon's entity): a value
    the user said goes only where a value of the same thing goes ('Accept' as the artist_id, 'KLGA' where the IATA
    code goes), never a track title as an artist_id or a 동 name as a 시군구 code (blind read s11 r2 #8: no capable
    assistant makes that slip); unknown entities do not rule a slip out. The build plays them all and keeps the
    first the tools really refuse."""
    calls = conv.get("golden_calls") or []
    if conv.get("case_pattern") not in RECOVERABLE or not calls:
        return []

    def same_thing(a: Mapping[str, Any], pa: str, b: Mapping[str, Any], pb: str) -> bool:
        if entity_of is None:
            return True
        x = entity_of(str(a.get("platform") or ""), a["name"], pa)
        y = entity_of(str(b.get("platform") or ""), b["name"], pb)
        return x is None or y is None or x == y

    found: dict[str, dict[str, Any]] = {}
    for index, call in enumerate(calls):
        subset = call.get("args_subset") or {}
        if not subset:
            continue
        for row in failures.get((call.get("platform", ""), call["name"]), []):
            wrong = {**call["args"], **{k: row["args"][k] for k in subset if k in row["args"]}}
            if wrong != call["args"] and "probe" not in found:
                found["probe"] = _with(conv, index, wrong, "probe", str(row.get("detail") or "")[:200])
        said = str(conv.get("initial_message") or "")
        given_at = [  # what the user said that an earlier step sent to a tool ('KLGA', '대구광역시'), and where; a
            (_said_as(v, said), c, p)  # 시도 the user said as people do ('대구') is what an agent slips in
            for c in calls
            if c.get("step", 0) < call.get("step", 0)
            for p, v in (c.get("args_subset") or {}).items()
            if isinstance(v, str) and _said_as(v, said)
        ]
        for k, v in subset.items():
            if isinstance(v, int) and not _ID_PARAM.search(k):
                continue  # a count or a size ('k': 5 results) is no value a lookup gives
            # only what names the same thing as this parameter: '남동구' (a 시군구 the search took) where the 시군구
            # code goes, never '인천광역시' (the 시도 said beside it) — with the 시도 there, the 시군구 is still the one
            # value the lookup converted (the 시군구 name-for-code slip: blind s14 asked for a Korean recovery)
            given = [g for g, c, p in given_at if same_thing(c, p, call, k)]
            # one value said and looked up: with two (the arms of a comparison) the wrong one could be the other arm's
            if len(set(given)) == 1 and not isinstance(v, bool) and str(v) not in said and "unconverted" not in found:
                if given[0] != v:
                    wrong = {**call["args"], k: given[0]}
                    found["unconverted"] = _with(conv, index, wrong, "unconverted", f"{k}: {v!r} → {given[0]!r}")
                    found["unconverted"]["recovery"]["first"] = True  # tried before the lookup
        for k, v in subset.items():  # the name said for a code no earlier call took ('경기도' as the sidoCd)
            if "unconverted" in found or not isinstance(v, str) or v in said:
                continue
            named = [n["value"] for n in conv.get("said_names") or [] if n["name"] == call["name"] and n["param"] == k]
            alike = [i for i, c in enumerate(calls) if c["name"] == call["name"] and k in (c.get("args_subset") or {})]
            if named and len(named) == len(alike):  # the names in the calls' order: the k-th call's name is k-th
                name = named[alike.index(index)]
                if name != v and _said_as(name, said):
                    name = _said_as(name, said)
                    wrong = {**call["args"], k: name}
                    found["unconverted"] = _with(conv, index, wrong, "unconverted", f"{k}: {v!r} → {name!r}")
                    found["unconverted"]["recovery"]["first"] = True  # tried before the lookup
        names = [  # names the user said (not codes): what an agent puts where the id goes, and where they went
            (v, c, p)
            for c in calls
            for p, v in (c.get("args_subset") or {}).items()
            if isinstance(v, str) and not _CODE.fullmatch(v) and v in said
        ]
        for k, v in subset.items():
            if isinstance(v, int) and not isinstance(v, bool) and _ID_PARAM.search(k) and "wrong_type" not in found:
                name = next((n for n, c, p in names if same_thing(c, p, call, k)), None)
                if name is None:
                    continue
                found["wrong_type"] = _with(
                    conv, index, {**call["args"], k: name}, "wrong_type", f"{k}: {v!r} → {name!r}"
                )
                if any(c.get("step", 0) < call.get("step", 0) for c in calls):  # the id is looked up first
                    found["wrong_type"]["recovery"]["first"] = True  # the slip is made before the lookup, not after
        for k in required.get(call["name"], []):
            rest = [b for a, b in call["args"].items() if a != k]  # what is left names something ('k': 5 does not)
            if k in subset and any(isinstance(b, str) for b in rest) and "missing_argument" not in found:
                wrong = {a: b for a, b in call["args"].items() if a != k}
                found["missing_argument"] = _with(conv, index, wrong, "missing_argument", f"{k} left out")
    return [found[k] for k in RECOVERY_KINDS if k in found]


def recovery_variant(conv: Mapping[str, Any], failures: Failures, required: Mapping[str, Sequence[str]]) -> dict | None:
    """The preferred recovery variant of a conversation (None when no call can be made wrong)."""
    found = recovery_variants(conv, failures, required)
    return found[0] if found else None


def _with(conv: Mapping[str, Any], index: int, args: dict[str, Any], kind: str, detail: str) -> dict[str, Any]:
    call = conv["golden_calls"][index]
    cid = "sha256:" + hashlib.sha256(dumps([conv["id"], "recovery", kind]).encode()).hexdigest()
    return {
        **conv,
        "id": cid,
        "recovers": conv["id"],
        "recovery": {
            "kind": kind,
            "detail": detail,
            "call_index": index,
            "failed_call": {"name": call["name"], "platform": call.get("platform"), "args": args},
        },
    }


def chosen(conv: Mapping[str, Any], share: float, seed: int) -> bool:
    """Whether a conversation is drawn to become a recovery conversation (deterministic per task)."""
    if share <= 0:
        return False
    draw = int(hashlib.sha256(dumps([seed, conv["id"], "recovery"]).encode()).hexdigest()[:8], 16) % 1000 / 1000
    return draw < share


def verified(conv: Mapping[str, Any], episode: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether the episode shows the recovery: the wrong call came back failed with an error text, and a
    later call of the same tool succeeded."""
    failed = conv["recovery"]["failed_call"]
    calls = list(episode.get("calls") or [])
    first = next((c for c in calls if c["tool"] == failed["name"] and c["args"] == failed["args"]), None)
    if first is None:
        return False, "the wrong call was not made"
    if first["ok"]:
        return False, "the wrong call did not fail"
    error = ""
    for m in episode.get("messages") or []:
        if m.get("role") == "tool" and m.get("tool_call_id") == first.get("call_id"):
            error = str(m.get("content") or "")
    if first.get("call_id") is not None and not error.strip():
        return False, "the failed call returned no error text"
    if not any(c["tool"] == failed["name"] and c["ok"] and c["index"] > first["index"] for c in calls):
        return False, "no corrected call succeeded"
    return True, "failed, then corrected"


def _said_as(value: str, said: str) -> str:
    """How the user's message says `value`: as it is, or a 시도's official name as people say it ('대구광역시' →
    '대구', `simulator.spoken_place`, as `persona.spoken_sido` wrote it); '' when the message does not say it."""
    if value in said:
        return value
    short = spoken_place(value)
    return short if short != value and re.search(rf"(?<![가-힣]){re.escape(short)}", said) else ""
