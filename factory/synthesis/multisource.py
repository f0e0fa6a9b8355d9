"""API+RAG trajectories and tasks (issue 17 item 4; VAKRA §3 multi-source setting, Appendix I-J).

A domain whose inventory holds a retrieval search tool (a `{kind: retrieval}` source) gets chains that
need both sources, executed for real against the pre-synthesis index version and the APIs:

- ``API-RAG`` (2 hops): an API call returns an entity (a name, title, code or date the question does not
  state); a search for it returns the passage about it; the answer is a number that passage states and
  no record of the chain holds.
- ``RAG-API`` (2 hops): the question names a document; a value its passage states (a code, a name, a
  date that an API parameter accepts: a value observed for that parameter in the probes) binds the
  API argument; the answer is a field of the API's record that the passages do not state.
- ``API-RAG-API`` (3 hops): both junctions in one chain.
- Longer chains (2-5 hops; issue 17 item 4) add an API→API edge the connectivity graph retained: before the search
  (``API-API-RAG``, 3 hops; ``API-API-RAG-API``, 4: the first record's field binds a lookup whose record leads to the
  document, `_api_api_heads`) or after the RAG→API hop (``RAG-API-API``, 3; ``API-RAG-API-API``, 4;
  ``API-API-RAG-API-API``, 5: the looked-up record's field binds a lookup whose record gives the answer,
  `_api_api_tail`). Hop counts beyond VAKRA's three share `retrieval.long_hop_share` (`hop_count_weights`).
- ``RAG`` (1 hop, RAG-only; `retrieval.rag_only_share` of the domain's multi-source tasks, VAKRA's 1-hop weight): the
  question names a document by itself and asks a number a reviewed fact of its passage states; the golden action is
  the search for the document's title citing the passage. Decontamination rule (b) (`judged_queries`) drops one an
  executed API response answers (`rag_answerable_by_api`).

Junction edges are proposed from the probes (API→RAG: a string field of an API record becomes the search
query; RAG→API: a passage value observed for an API parameter binds it), executed, and scored with the
outcome classes of Table 7 (`factory.tools.outcomes`); an edge trial succeeds when the call succeeded
and it grounded (the search returned a passage stating the entity; the API call returned records).
Hop types are drawn with VAKRA's hop-count weights (1/2/3 hops: 0.10/0.60/0.30; one hop is single-source,
so 2 and 3 hops renormalized, the two 2-hop types equally likely).

Questions are asked about the entity, never about a tool, field or document (`factory.synthesis.rag_phrasing`):
the first API call's record is named through the tool frames of the domain lexicon (it must be named by its own name,
title or code), the document and the fact asked through the project's reviewed passage lexicon
(`lexicon/passages/<domain>.yaml`); a passage number or name no reviewed fact covers is never asked (``unphraseable``
with a code). Answers are sentences (`answer_text`).

Cross-source answerability (each hop needs its source): the final answer must not be stated in the
chain's passages when an API gives it (``answer_in_documents``) nor be in the chain's API records when a
passage gives it (``answer_from_apis``); the question never states the bridge value
(``bridge_named_in_question``); and a search with the question alone must not return the gold passage
first when an API hop leads to it (``documents_alone_suffice``). Golden actions carry `source_type`
and, for searches, the `passage_ids` the next hop or the answer uses. `replay` re-executes a task.
"""

from __future__ import annotations

import asyncio
import math
import re
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from factory.config import GraphConfig, ProjectConfig
from factory.frames import display_name
from factory.graph.posterior import EMPTY_RESULT, outcome_group, outcome_update
from factory.records import Answer, GoldenAction, Junction, Lineage, Task, task_id
from factory.retrieval.decontam import sentences as _sentences
from factory.synthesis import phrasing
from factory.synthesis import rag_phrasing as rp
from factory.tools.fingerprint import sha256_digest
from factory.tools.registry import ToolRegistry, executor_factory
from factory.tools.spec import ToolSpec

BASE_HOP_TYPES = ("API-RAG", "RAG-API", "API-RAG-API")  # the chains (both sources) from one first API call
# the same junctions after an API→API edge of the connectivity graph (`_api_api_heads`): the question names a record,
# a second API call looks up the record one of its fields references, and that record leads to the document
LONG_HOP_TYPES = ("API-API-RAG", "API-API-RAG-API")
# one more API call after the passage's: an API→API edge from the record a passage value found (`_api_api_tail`);
# a chain of the shorter type is upgraded to it while it is below its share (`tail_chain`), never drawn by itself
TAIL_HOP_TYPES = ("RAG-API-API", "API-RAG-API-API", "API-API-RAG-API-API")
HOP_TYPES = (*BASE_HOP_TYPES, *LONG_HOP_TYPES, *TAIL_HOP_TYPES)
RAG_ONLY = "RAG"  # one search; the answer a passage states (`retrieval.rag_only_share` of a domain's tasks)
HOPS = {h: len(h.split("-")) for h in (*HOP_TYPES, RAG_ONLY)}  # hops = sources called in order
VAKRA_HOP_WEIGHTS = {1: 0.10, 2: 0.60, 3: 0.30}  # VAKRA §3: hop counts sampled 0.10/0.60/0.30 for 1/2/3
REJECTIONS = {
    "api_call_failed": "an API hop did not succeed with records",
    "no_passage_for_entity": "the search for the API value returned no passage stating it",
    "no_passage_value": "no passage sentence states a value an API parameter accepts",
    "no_passage_number": "the passage states no number outside the chain's API records and the entity",
    "answer_in_documents": "the API answer is stated in the chain's passages (documents alone answer)",
    "answer_from_apis": "the passage number is in the chain's API records (the APIs alone answer)",
    "bridge_named_in_question": "the question states the value the passage should supply",
    "api_hop_unneeded": "the first API call's output is spelled by the value it was sent (KJFK → JFK): the search "
    "needs no API call, a reader reads the value off the question (blind read s12 en2 #4/#8); or an API→API hop adds "
    "nothing: the record before it holds the entity already, or it finds a record the document names",
    "documents_alone_suffice": "a search with the question alone returns the gold passage first",
    "api_hop_in_documents": "a search for what the question states already returns a passage naming the API hop's "
    "entity ('Balls to the Wall' finds the album note that names Accept; 'LaGuardia Airport' finds a bulletin that "
    "says LGA): the first API call can be skipped (blind read s18 multi-source #3, #4, #11, #14)",
    "duplicate": "a task with the same golden calls was already kept",
    "repeated_answer": "retrieval.multisource_max_per_answer chains already share this answer or passage-picked entity",
    "near_duplicate": "a kept task of the same hop type already finds the same record through a document (송파구 leads "
    "서울특별시 in every census year: one question about it, not one per year)",
    "unphraseable": "the question cannot be said naturally (code: rag_phrasing.UNPHRASEABLE_CODES)",
    "answer_named_in_question": "the question states the number the passage answers (a RAG-only fact whose number is "
    "part of the document's name: the census year)",
}
_ID_FIELD = re.compile(r"(^|_)(id|key|code|digest|url|uri)$", re.IGNORECASE)
_KEY = "<KEY>"
_DOCS_SEARCHED = 10  # passages a search for an entity's documents returns (its documents are chosen among them)
_DOCS_PER_ENTITY = 3  # documents about one entity that questions are drawn from
_SEEDED_CALLS = 12  # first hops found from the corpus's subjects (`_seeded_calls`)


def hop_count_weights(long_share: float = 0.0) -> dict[int, float]:
    """Probability of each hop count of an API+RAG chain: VAKRA's 2- and 3-hop weights renormalized (a 1-hop task uses
    one source only) to 1 - `long_share`; the hop counts beyond VAKRA's (4: `API-API-RAG-API`, `API-RAG-API-API`; 5:
    `API-API-RAG-API-API`) share `long_share` (`retrieval.long_hop_share`) equally."""
    two, three = VAKRA_HOP_WEIGHTS[2], VAKRA_HOP_WEIGHTS[3]
    out = {2: two / (two + three) * (1 - long_share), 3: three / (two + three) * (1 - long_share)}
    longer = sorted({HOPS[h] for h in HOP_TYPES if HOPS[h] > 3})
    out.update({c: long_share / len(longer) for c in longer})
    return out


def hop_weights(long_share: float = 0.0, kinds: Sequence[str] = BASE_HOP_TYPES) -> dict[str, float]:
    """Probability of each hop type of `kinds` (the ones a first hop can make: `head_kinds`): its hop count's weight
    (`hop_count_weights`) shared equally by the types of `kinds` with that count, renormalized over `kinds`; a type
    whose count has no weight (4 hops with `long_share` 0) is left out. From one API call the types are VAKRA's
    API-RAG / RAG-API 0.6 / 2 each and API-RAG-API 0.3 of 0.9; after an API→API edge API-API-RAG and API-API-RAG-API
    take the 3- and 4-hop weights."""
    counts = hop_count_weights(long_share)
    raw = {h: counts.get(HOPS[h], 0.0) / sum(1 for x in kinds if HOPS[x] == HOPS[h]) for h in kinds}
    raw = {h: w for h, w in raw.items() if w > 0}
    total = sum(raw.values())
    return {h: w / total for h, w in raw.items()} if total else {}


def head_kinds(calls: int) -> tuple[str, ...]:
    """The hop types a first hop of `calls` API calls can make: one call, the base types; two (an API→API edge), the
    long ones (RAG-API starts from a document, so it has no longer form on the API side)."""
    return BASE_HOP_TYPES if calls <= 1 else LONG_HOP_TYPES


def base_kind(kind: str) -> str:
    """The junctions a hop type is built from: 'API-API-RAG-API' is 'API-RAG-API' after one more API call."""
    return kind[len("API-") :] if kind.startswith("API-API-") else kind


def long_quota(quota: int, long_share: float) -> int:
    """Chains kept per domain of a hop type beyond VAKRA's three hops: `long_share` of the base types' quotas
    (ceil(share x quota x 3)), at least 1 when the share is above 0."""
    if long_share <= 0:
        return 0
    return max(1, math.ceil(round(long_share * quota * len(BASE_HOP_TYPES), 9)))


def rag_only_quota(share: float, chains: int) -> int:
    """RAG-only tasks beside a domain's `chains` API+RAG chains: ceil(share x chains / (1 - share)) (RAG-only is
    `share` of the domain's multi-source tasks), at least 1 when `share` is above 0."""
    if share <= 0:
        return 0
    return max(1, math.ceil(round(share * chains / (1 - share), 9)))


def kind_order(draw: str, have: Mapping[str, int], weights: Mapping[str, float]) -> list[str]:
    """The hop types of `weights` to try for one document: the drawn one first among those equally filled relative to
    their weight, a type furthest below its share before it ('API-RAG-API' with none kept goes before a drawn 'API-RAG'
    with two)."""
    return sorted([draw, *[h for h in weights if h != draw]], key=lambda h: have.get(h, 0) / weights[h])


def _words(name: str) -> str:
    return re.sub(r"[_\s]+", " ", name).strip()


def _boundary(value: str) -> re.Pattern[str]:
    """`value` as a whole word (a Korean particle may follow; a number is not part of a longer one)."""
    return re.compile(r"(?<![0-9A-Za-z가-힣])" + re.escape(value) + r"(?![0-9A-Za-z]|[.,][0-9])", re.IGNORECASE)


def states(text: str, value: Any) -> bool:
    """Whether `text` states `value` as a whole word (numbers also with thousands separators)."""
    if value is None or isinstance(value, bool | dict | list):
        return False
    forms = {str(value)}
    if isinstance(value, int | float) and float(value).is_integer():
        forms |= {str(int(value)), f"{int(value):,}"}
    elif isinstance(value, float):
        forms |= {f"{value:g}", f"{value:.2f}", f"{value:.1f}"}
    return any(f.strip() and _boundary(f.strip()).search(text) for f in forms)


def about(title: str, entity: str) -> bool:
    """A document titled `title` is about `entity`: the title starts with it as a whole word ('Let There Be
    Rock (AC/DC)' is about the album, not about the genre Rock)."""
    t, e = title.strip().casefold(), entity.strip().casefold()
    return bool(e) and t.startswith(e) and (len(t) == len(e) or not t[len(e)].isalnum())


def spells(stated: str, value: str) -> bool:
    """A code the question states spells `value` (another code of the same record): one token that starts or ends with
    it ('KJFK' spells 'JFK'). A lookup from the one to the other is no hop: the value is read off the question."""
    a, b = str(stated).strip().casefold(), str(value).strip().casefold()
    return len(b) >= 3 and a != b and not re.search(r"\s", a + b) and (a.startswith(b) or a.endswith(b))


def entity_like(v: Any) -> bool:
    """A value a question or a search can name: a string with a letter, 3-80 characters, not a key or URL."""
    if not isinstance(v, str):
        return False
    s = v.strip()
    return (
        3 <= len(s) <= 80
        and s != _KEY
        and "://" not in s
        and re.search(r"[A-Za-z가-힣]", s) is not None
        and not s.startswith("sha256:")
    )


def _record_values(records: Sequence[Mapping[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for r in records:
        for v in r.values():
            if isinstance(v, str | int | float) and not isinstance(v, bool):
                out.append(v)
    return out


def _passage_text(p: Mapping[str, Any]) -> str:
    return f"{p.get('title') or ''}\n{p.get('text') or ''}"


class _Context:
    """The domain's tools, search tool, probe calls and the values observed per API parameter."""

    def __init__(
        self,
        domain: str,
        inventories: Mapping[str, Any],
        probes: Mapping[str, Any],
        cfg: ProjectConfig,
        graph: Mapping[str, Any] | None = None,
        frames: Mapping[str, Any] | None = None,
    ):
        from factory.frames import frames_for
        from factory.semtypes import ValueTypes

        self.domain, self.cfg = domain, cfg
        types = ValueTypes.from_graph(graph or {})
        self.types = types
        self.registry = ToolRegistry.from_inventories(inventories, probes)
        specs = self.registry.in_domain(domain)
        # the tool frames the API-only questions are composed of (the domain's tool_lexicon value, else rules) and
        # the corpus's reviewed passage lexicon: how questions name documents and ask for what passages state
        self.frames: Mapping[str, Any] = frames if frames is not None else frames_for(self.registry)
        path = rp.passage_lexicon_file(cfg.project_dir, domain)
        self.passages = rp.load_passage_lexicon(path) if path is not None else None
        self.search: ToolSpec | None = next((s for s in specs if s.source.kind == "retrieval"), None)
        self.apis = {
            s.name: s
            for s in specs
            if s.source.kind != "retrieval" and s.key_acquisition is None and not s.state_changing
        }
        self.language = cfg.domain(domain).language
        rows = [r for r in (probes.get(domain) or {}).get("rows") or [] if r.get("outcome_group") == "success"]
        # first hops: calls whose arguments a question can state (names, titles, codes, dates: no surrogate ids)
        # and that return one record (the entity the question is about is then unambiguous)
        self.calls = [
            r for r in rows
            if r.get("tool") in self.apis and int(r.get("record_count") or 0) == 1
            and all(entity_like(v) for k, v in (r.get("args") or {}).items()
                    if k not in self.apis[str(r["tool"])].generic_params.names() and v != _KEY)
            and any(entity_like(v) for v in (r.get("args") or {}).values())
        ]  # fmt: skip
        self.calls.sort(key=lambda r: str(r.get("call_digest")))
        # (tool, param) → values that may fill it: sent to it in a probe, or a record field whose value type the
        # parameter accepts (equal or narrower; an untyped parameter: the same tool's field of the same name)
        seen_fields: dict[tuple[str, str], set[str]] = {}
        for r in rows:
            for f, vs in (r.get("sample_values") or {}).items():
                seen_fields.setdefault((str(r.get("tool")), f), set()).update(v for v in vs or [] if entity_like(v))

        platform_of = {x.name: x.platform for x in specs}

        def tid(name: str) -> str:
            return f"{domain}/{platform_of.get(name, '')}/{name}"

        self.tid = tid

        self.known: dict[tuple[str, str], set[str]] = {}
        for name, spec in self.apis.items():
            generic = set(spec.generic_params.names())
            for p in spec.input_schema.get("properties") or {}:
                if p in generic:
                    continue
                ptype = types.param_type(tid(name), p)
                vals: set[str] = set()
                for (tool, f), vs in seen_fields.items():
                    check = types.accepts(ptype, types.field_type(tid(tool), f))
                    if check in ("equal", "subtype") or (check is None and tool == name and f == p):
                        vals |= vs
                vals |= {
                    v
                    for r in self.calls
                    if r.get("tool") == name
                    for k, v in (r.get("args") or {}).items()
                    if k == p and entity_like(v)
                }
                if vals:
                    self.known[(name, p)] = vals
        self.name_params: list[tuple[str, str]] = []  # (tool, param) that take a display name or title
        for name, spec in self.apis.items():
            generic = set(spec.generic_params.names())
            for p in spec.input_schema.get("properties") or {}:
                ptype = types.param_type(tid(name), p) or ""
                if p not in generic and (ptype.endswith((".name", ".title")) or p in ("name", "title")):
                    self.name_params.append((name, p))
        self.param_types = {(n, p): types.param_type(tid(n), p) for n, p in self.name_params}
        self.base_args: dict[
            str, dict[str, Any]
        ] = {}  # tool → the args of its first successful probe (other required args of a RAG→API call)
        for r in sorted(rows, key=lambda r: str(r.get("call_digest"))):
            if r.get("tool") not in self.apis:
                continue
            self.base_args.setdefault(r["tool"], dict(r.get("args") or {}))
        # API→API edges the connectivity graph retained (executed and scored in Phase A) with one binding, between
        # read tools of the domain: (source tool, field, target tool, param, graph edge id); `_api_api_heads`
        self.api_edges: list[tuple[str, str, str, str, str]] = sorted(
            {(str(e["source_tool"]), str(e["bindings"][0]["source_field"]), str(e["target_tool"]),
              str(e["bindings"][0]["target_param"]), str(e.get("edge_id") or ""))
             for e in (graph or {}).get("edges") or []
             if isinstance(e, Mapping) and e.get("status") == "retained" and not e.get("cross_domain")
             and len(e.get("bindings") or []) == 1 and e.get("source_tool") in self.apis
             and e.get("target_tool") in self.apis and e.get("source_tool") != e.get("target_tool")}
        )  # fmt: skip
        # more first hops: a name-taking tool called with a name another record gave (resolved to one record)
        for tool, p in self.name_params:
            spec = self.apis[tool]
            keep = set(spec.generic_params.names()) | set(spec.required_params)
            base = {k: x for k, x in self.base_args.get(tool, {}).items() if k in keep and k != p}
            for v in sorted(self.known.get((tool, p), set()))[:4]:
                self.calls.append({"tool": tool, "args": {**base, p: v}, "call_digest": f"{tool}:{p}={v}"})


def _action(step: int, spec: ToolSpec, res: Any, passage_ids: Sequence[str] = ()) -> dict[str, Any]:
    return {
        "step": step,
        "tool": spec.name,
        "tool_id": f"{spec.domain}/{spec.platform}/{spec.name}",
        "platform": spec.platform,
        "args": dict(res.args),
        "result_digest": sha256_digest([res.records, res.total_count]),
        "records": len(res.records),
        "total_count": res.total_count,
        "call_digest": res.call_digest,
        "outcome": str(res.outcome),
        "source_type": "retrieval" if spec.source.kind == "retrieval" else "api",
        "passage_ids": list(passage_ids),
    }


def repeat_keys(answer: Mapping[str, Any], extra: Mapping[str, Any]) -> list[str]:
    """What readers see repeated across a domain's API+RAG tasks: the answer value and the entity a passage picked
    (the RAG→API bridge: 송파구, the largest district of every census year, answered by its code or its name)."""
    out = [f"answer:{answer.get('value')}"]
    bridge = extra.get("bridge")
    if isinstance(bridge, Mapping) and bridge.get("value") not in (None, ""):
        out.append(f"entity:{bridge['value']}")
    return out


def with_key_calls(
    actions: Sequence[Mapping[str, Any]],
    spec: Mapping[str, Any],
    keys: Mapping[str, Mapping[str, Any]],
    keyed: set[str],
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The golden path with the calls that issue the API keys it needs: `keys` holds the executed key call of each
    platform (a golden action row, step 1), `keyed` the names of the tools that take a key. Every platform one of
    the path's API calls needs a key for gets its key call first (step 1), the other steps move one on, and the
    answer spec's call references follow (blind read s10: search_admin_emd, search_census_district and
    get_airport_by_icao were called with a serviceKey/api_key no golden call had issued, as the API-only chains
    do: `trajectories._acquire_keys`)."""
    need = sorted({str(a["platform"]) for a in actions if a.get("source_type") == "api" and a["tool"] in keyed})
    missing = [p for p in need if p not in keys]
    if missing:
        raise KeyError(f"no key call for platform(s) {missing}")
    if not need:
        return [dict(a) for a in actions], dict(spec)
    out = [{**dict(keys[p]), "step": 1} for p in need]
    out += [{**dict(a), "step": int(a["step"]) + 1} for a in actions]
    moved = dict(spec)
    if isinstance(spec.get("calls"), list):
        moved["calls"] = [{**dict(c), "step": int(c["step"]) + 1} for c in spec["calls"]]
    return out, moved


class _Edges:
    """Trials of API→RAG and RAG→API junction edges, scored as Phase A scores API edges: each outcome class moves
    the edge's Beta by its EDGE Table 7 increment (`factory.graph.posterior.outcome_update`: a schema mismatch
    weighs β+1.5, a rate limit β+0.1, a semantic success α+1, a generic-only success α+0.3), and a call that
    succeeded without the bound value grounding its result (a search whose passages never name the entity, a
    passage value the API answers nothing for) counts as `empty_result`, the structural failure of a wrong
    binding. `outcomes` keeps the trials by class, `groups` by outcome group."""

    def __init__(self, graph: GraphConfig | None = None) -> None:
        self.edges: dict[str, dict[str, Any]] = {}
        self.graph = graph if graph is not None else GraphConfig()

    def trial(self, kind: str, source: str, field: str, target: str, param: str, res: Any, grounded: bool) -> None:
        eid = f"{kind}:{source}.{field}->{target}.{param}"
        e = self.edges.setdefault(
            eid,
            {"edge_id": eid, "hop": kind, "source": source, "target": target,
             "binding": {"field": field, "param": param,
                         "transform": {"API→RAG": "entity_query", "API→API": "upstream_value"}.get(kind,
                                                                                                 "passage_value")},
             "trials": 0, "successes": 0, "outcomes": {}, "groups": {}, "alpha": 1.0, "beta": 1.0},
        )  # fmt: skip
        e["trials"] += 1
        outcome = getattr(res.outcome, "value", str(res.outcome))
        success = bool(getattr(res.outcome, "is_success", False))
        cls = outcome if (grounded or not success) else EMPTY_RESULT
        e["outcomes"][cls] = e["outcomes"].get(cls, 0) + 1
        group = outcome_group(cls) if cls == EMPTY_RESULT else getattr(res.outcome, "group", "other")
        e["groups"][group] = e["groups"].get(group, 0) + 1
        if success and grounded:
            e["successes"] += 1
        try:
            which, step = outcome_update(cls, self.graph)
        except (KeyError, ValueError):  # an outcome Table 7 does not know counts as uncategorized
            which, step = outcome_update("uncategorized", self.graph)
        e[which] = round(e[which] + step, 4)

    def rows(self) -> list[dict[str, Any]]:
        out = []
        for e in sorted(self.edges.values(), key=lambda x: x["edge_id"]):
            a, b = e["alpha"], e["beta"]
            out.append({**e, "posterior_mean": round(a / (a + b), 4)})
        return out


def _mask(sentence: str, value: str, placeholder: str) -> str:
    return _boundary(value).sub(placeholder, sentence, count=1)


def _bridge_said(nf: rp.NameFact, name: str) -> str:
    """The name a passage gave, as the answer says it: a title quoted ('Princess of the Dawn'), other names bare."""
    return f"'{name}'" if nf.type.endswith(".title") and not name.startswith("'") else name


def _answer_field(
    records: Sequence[Mapping[str, Any]],
    passages: Sequence[Mapping[str, Any]],
    bridge: str,
    param: str,
    frame: Mapping[str, Any] | None = None,
) -> list[str]:
    """Fields of the API's first record whose value the passages do not state: not the bridge, not an internal key
    (a public code the frame calls a display value may be asked: '행정구역 코드'), not a URL or digest."""
    if not records:
        return []
    text = "\n".join(_passage_text(p) for p in passages)
    slots = (frame or {}).get("fields") or {}
    out = []
    for f, v in sorted(records[0].items()):
        kind = (slots.get(f) or {}).get("kind")
        if f == param or v in (None, "", bridge) or isinstance(v, bool | dict | list) or kind == "key":
            continue
        if (slots.get(f) or {}).get("uniform"):  # the document picked the record: a value every record has says nothing
            continue
        if (slots.get(f) or {}).get("asked") is False:  # no person asks for it (the lexicon's `asked: false`)
            continue
        if _ID_FIELD.search(f) and (kind != "display" or re.search(r"(url|uri|digest)$", f, re.IGNORECASE)):
            continue
        if isinstance(v, str) and not entity_like(v) and not re.fullmatch(r"[\d.,]+", v):
            continue
        if not states(text, v) and not _items_stated(text, v):
            out.append(f)
    return out


def _items_stated(text: str, v: Any) -> bool:
    """A list written in one string ('Angus Young, Malcolm Young, Brian Johnson') whose every item the text states, in
    any order ('Composers credited: Angus Young, Brian Johnson, Malcolm Young'): the passage gives it."""
    if not isinstance(v, str):
        return False
    items = [x.strip() for x in re.split(r",|/|;|&| and ", v) if x.strip()]
    return len(items) >= 2 and all(states(text, x) for x in items)


def _seed(
    ctx: _Context, spec: ToolSpec, args: Mapping[str, Any], record: Mapping[str, Any] | None = None
) -> phrasing.Ref:
    """The record the first API call returns, named the way the API-only questions name a seed call's records."""
    tid = ctx.tid(spec.name)
    frame = ctx.frames.get(tid)
    if frame is None:
        raise rp.RagUnphraseable(f"no frame for {spec.name}", "reference")
    generic = set(spec.generic_params.names())
    values = [(p, v) for p, v in args.items() if p not in generic and v != _KEY]
    if not any((frame["params"].get(p) or {}).get("kind") == "display" for p, _ in values):
        # a record found by what it refers to reads as a relation ('the artist of the track of the composer X, Y & Z'):
        # a question starts from a record named by its own name, title or public code
        raise rp.RagUnphraseable(
            f"{spec.name}({', '.join(p for p, _ in values)}) names no record by itself", "reference"
        )
    # a record named by a value it does not hold ('the artist miles' for Miles Davis) is misnamed
    if record is not None:
        held = {str(x).strip().casefold() for x in record.values() if isinstance(x, str | int | float)}
        for p, v in values:
            if (frame["params"].get(p) or {}).get("kind") == "display" and str(v).strip().casefold() not in held:
                raise rp.RagUnphraseable(f"{spec.name}({p}={v!r}) names a record that does not hold it", "reference")
    try:
        return phrasing.seed_ref(spec, frame, values, args, ctx.language, True)
    except phrasing.Unphraseable as e:
        raise rp.RagUnphraseable(f"{spec.name}: {e}", "reference") from e


def _bridge_doc(
    ctx: _Context, spec1: ToolSpec, res1: Any, f: str, title: str, up: phrasing.Ref | None = None,
    values: Sequence[Any] | None = None,
) -> rp.DocRef:  # fmt: skip
    """How the question names the document reached from field `f` of the last API call's record: `up` names that
    record (None: the first call's seed phrase; after an API→API hop, the phrase `phrasing.link` gave it), `values`
    are the chain's API values a title part may be (None: the call's own)."""
    assert ctx.passages is not None
    frame = ctx.frames.get(ctx.tid(spec1.name)) or {}
    slot = (frame.get("fields") or {}).get(f) or {}
    if up is None:
        up = _seed(ctx, spec1, res1.args, res1.records[0] if res1.records else None)
    same = slot.get("kind") in ("display", "key") and slot.get("entity") == frame.get("entity")
    noun = (slot.get("noun") or {}).get(ctx.language) or (slot.get("noun") or {}).get("en")
    held = _record_values(res1.records) if values is None else list(values)
    return rp.document_via(ctx.passages, title, ctx.language, slot.get("type"), up, noun, held, same,
                           frame.get("entity"))  # fmt: skip


def _bridge_fields(ctx: _Context, spec1: ToolSpec, record: Mapping[str, Any], named: set[str]) -> list[tuple[str, str]]:
    """(field, value) of the first call's record that may lead to a document: a name or code of the value type some
    document of the corpus is about (every entity-like field when the frame gives no type)."""
    frame = ctx.frames.get(ctx.tid(spec1.name)) or {}
    subjects = {t for d in ctx.passages.documents for t in d.subject} if ctx.passages else set()
    out = []
    for f, v in sorted(record.items()):
        if not entity_like(v) or str(v) in named:
            continue
        ftype = str(((frame.get("fields") or {}).get(f) or {}).get("type") or "").split("@")[0]
        if (ftype and ftype in subjects) or (not ftype and not _ID_FIELD.search(f)):
            out.append((f, str(v)))
    return out


def _golds_of(ctx: _Context, records: Sequence[Mapping[str, Any]], e: str) -> list[Mapping[str, Any]]:
    """The passages about `e`, in search order: a title with a reviewed form whose subject is `e` (without a passage
    lexicon: a title that starts with `e`)."""
    out = []
    for p in records:
        title = str(p.get("title") or "")
        if ctx.passages is None:
            if about(title, e):
                out.append(p)
            continue
        found = ctx.passages.form_of(title)
        if found and _spaceless(found[1].get("subject", "")) == _spaceless(e):
            out.append(p)
    return out


def _spaceless(name: str) -> str:
    """A name compared without its spacing: the code tables store '수원시장안구', the bulletins title '수원시 장안구'."""
    return re.sub(r"\s+", "", str(name)).casefold()


@dataclass
class _Head:
    """The API calls a chain starts with: one first hop, or one more after an API→API edge of the connectivity graph
    (`_api_api_heads`); `ref` names the last call's record (None: the first call's own seed phrase), `junctions` and
    `edges` are those between the calls."""

    calls: list[tuple[ToolSpec, Any]]
    ref: phrasing.Ref | None = None
    junctions: list[dict[str, Any]] = field(default_factory=list)
    edges: list[str] = field(default_factory=list)

    @property
    def last(self) -> tuple[ToolSpec, Any]:
        return self.calls[-1]

    def actions(self) -> list[dict[str, Any]]:
        return [_action(i + 1, spec, res) for i, (spec, res) in enumerate(self.calls)]

    def upstream_values(self) -> set[str]:
        """The values of the records before the last call (and what the first call was sent): an entity the chain
        reaches must not be among them, or the last API call is not needed."""
        out = {str(v).strip().casefold() for _, res in self.calls[:-1] for v in _record_values(res.records)}
        return out | {str(v).strip().casefold() for v in self.calls[0][1].args.values()}


def chain_parts(
    head: _Head | None, search: ToolSpec, sres: Any, gold_id: str, field_name: str = "",
    tail: tuple[ToolSpec, str, Any] | None = None, after: tuple[ToolSpec, str, str, Any, str] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[str]]:  # fmt: skip
    """(golden actions, junctions, edge ids) of a chain: the API calls of `head` (steps 1..n; None: a chain that starts
    with the search), the search for field `field_name` of the last one citing `gold_id` (step n+1), with `tail`
    (spec, param, result) the API call a value of the passage binds (step n+2), and with `after` (spec, field of the
    tail's record, param, result, edge id) the API call that field binds (step n+3); every call in the order made."""
    n = len(head.calls) if head is not None else 0
    actions = [*(head.actions() if head is not None else []), _action(n + 1, search, sres, [gold_id])]
    junctions: list[dict[str, Any]] = []
    chain: list[str] = []
    if head is not None:
        spec1, _ = head.last
        japi = f"API→RAG:{spec1.name}.{field_name}->{search.name}.query"
        junctions = [*head.junctions, {"from": f"{spec1.name}.{field_name}", "to": f"{search.name}.query",
                                       "type": "SEQ", "n": 1, "width": 1, "edge_id": japi}]  # fmt: skip
        chain = [*head.edges, japi]
    if tail is not None:
        spec2, param, res2 = tail
        actions.append(_action(n + 2, spec2, res2))
        jrag = f"RAG→API:{search.name}.text->{spec2.name}.{param}"
        junctions.append({"from": f"{search.name}.text", "to": f"{spec2.name}.{param}", "type": "SEQ", "n": 1,
                          "width": 1, "edge_id": jrag})  # fmt: skip
        chain.append(jrag)
        if after is not None:
            spec3, fld, p3, res3, eid = after
            actions.append(_action(n + 3, spec3, res3))
            junctions.append({"from": f"{spec2.name}.{fld}", "to": f"{spec3.name}.{p3}", "type": "SEQ", "n": 1,
                              "width": 1, "edge_id": eid})  # fmt: skip
            chain.append(eid)
    return actions, junctions, chain


def _is_lookup(spec: ToolSpec) -> bool:
    """A tool returning one record by what it is sent (no records list): 'the album of the track X' names one record;
    a listing that returned one would presuppose what only the data say (`phrasing.seed_ref`, ``presupposed``)."""
    return spec.records_path is None


async def _api_api_heads(
    ctx: _Context, ex: Any, edges: _Edges, spec0: ToolSpec, res0: Any, reject: Any, limit: int = 2
) -> list[_Head]:
    """Two-call first hops from the first call's record: an API→API edge of the connectivity graph (`ctx.api_edges`)
    from `spec0` into a lookup tool binds a field of the record (a surrogate id too: the question never states it), the
    call is executed and must return one record; the question names it as the record the first one references ('the
    album of the track 'Fast As a Shark''), phrased by `phrasing.link` like the API-only chains. Each trial is scored
    as an `API→API` edge; a call that fails, returns no single record or cannot be said is rejected with its reason."""
    out: list[_Head] = []
    record0 = res0.records[0]
    frame0 = ctx.frames.get(ctx.tid(spec0.name))
    if not any(src == spec0.name and _is_lookup(ctx.apis[dst]) for src, _, dst, _, _ in ctx.api_edges):
        return out
    try:  # the question names the first record by itself (no call is made for a record it cannot name)
        if frame0 is None:
            raise rp.RagUnphraseable(f"no frame for {spec0.name}", "reference")
        up = _seed(ctx, spec0, res0.args, record0)
    except rp.RagUnphraseable as x:
        reject("API-API-RAG", "unphraseable", f"{x.code}: {x}", "reference")
        return out
    async for spec1, fld, param, res1, gid in _lookups(ctx, ex, edges, spec0, record0, reject, "API-API-RAG"):
        frame1 = ctx.frames.get(ctx.tid(spec1.name))
        try:
            if frame1 is None:
                raise rp.RagUnphraseable(f"no frame for {spec1.name}", "reference")
            ref = phrasing.link(up, frame0, [fld], spec1, frame1, [param], [], res1.args, ctx.language,
                                unique=True, seen_one=True)  # fmt: skip
        except (rp.RagUnphraseable, phrasing.Unphraseable) as x:  # the API hop has no noun phrase (code reference)
            reject("API-API-RAG", "unphraseable", f"{getattr(x, 'code', '')}: {x}", "reference")
            continue
        if not ref.one:
            reject("API-API-RAG", "unphraseable", f"presupposed: {ref.text!r} names several records", "reference")
            continue
        eid = gid or f"API→API:{spec0.name}.{fld}->{spec1.name}.{param}"
        junction = {"from": f"{spec0.name}.{fld}", "to": f"{spec1.name}.{param}", "type": "SEQ", "n": 1, "width": 1,
                    "edge_id": eid}  # fmt: skip
        out.append(_Head([(spec0, res0), (spec1, res1)], ref, [junction], [eid]))
        if len(out) >= limit:
            break
    return out


async def _api_api_tail(
    ctx: _Context, ex: Any, edges: _Edges, spec2: ToolSpec, res2: Any, up: phrasing.Ref, reject: Any, kind: str,
    limit: int = 2,
) -> list[tuple[ToolSpec, str, str, Any, str, phrasing.Ref]]:  # fmt: skip
    """One more API call after a RAG→API hop: an API→API edge of the connectivity graph (`ctx.api_edges`) from the
    record the passage's value found (`res2`, named `up`: 'the longest track on the album …') into a lookup tool,
    executed, one record back, named by `phrasing.link` ('the album containing the longest track on …'): (spec,
    field, param, result, edge id, phrase) each; a trial scored as an `API→API` edge, a failure rejected as `kind`."""
    out: list[tuple[ToolSpec, str, str, Any, str, phrasing.Ref]] = []
    record2 = res2.records[0]
    frame2 = ctx.frames.get(ctx.tid(spec2.name))
    if frame2 is None:
        return out
    async for spec3, fld, param, res3, gid in _lookups(ctx, ex, edges, spec2, record2, reject, kind):
        frame3 = ctx.frames.get(ctx.tid(spec3.name))
        try:
            if frame3 is None:
                raise rp.RagUnphraseable(f"no frame for {spec3.name}", "reference")
            ref = phrasing.link(up, frame2, [fld], spec3, frame3, [param], [], res3.args, ctx.language,
                                unique=True, seen_one=True)  # fmt: skip
        except (rp.RagUnphraseable, phrasing.Unphraseable) as x:
            reject(kind, "unphraseable", f"{getattr(x, 'code', '')}: {x}", "reference")
            continue
        if not ref.one:
            reject(kind, "unphraseable", f"presupposed: {ref.text!r} names several records", "reference")
            continue
        out.append((spec3, fld, param, res3, gid or f"API→API:{spec2.name}.{fld}->{spec3.name}.{param}", ref))
        if len(out) >= limit:
            break
    return out


async def _lookups(
    ctx: _Context, ex: Any, edges: _Edges, src: ToolSpec, record: Mapping[str, Any], reject: Any, kind: str
) -> AsyncIterator[tuple[ToolSpec, str, str, Any, str | None]]:
    """The API→API edges of the connectivity graph (`ctx.api_edges`) from `src` into a lookup tool, each called with
    the value `record` holds for its field: (spec, field, param, result, edge id) of a call that returned one
    record. Each call is a trial scored as an `API→API` edge; a failed one is rejected as `kind`. A caller that
    stops iterating makes no further call."""
    for name, fld, dst, param, gid in ctx.api_edges:
        if name != src.name or not _is_lookup(ctx.apis[dst]):
            continue
        v = record.get(fld)
        if v in (None, "") or isinstance(v, bool | dict | list):
            continue
        spec = ctx.apis[dst]
        keep = set(spec.generic_params.names()) | set(spec.required_params)
        base = {a: y for a, y in ctx.base_args.get(dst, {}).items() if a in keep and a != param}
        res = await ex.call(spec, {**base, param: v})
        ok = res.outcome.is_success and len(res.records) == 1
        edges.trial("API→API", src.name, fld, spec.name, param, res, ok)
        if not ok:
            reject(kind, "api_call_failed", f"{spec.name}({param}={v!r}): {res.outcome}, {len(res.records)} records")
            continue
        yield spec, fld, param, res, gid


async def _synthesize(ctx: _Context, rng: np.random.Generator, quota: int, k: int) -> dict[str, Any]:
    search = ctx.search
    assert search is not None
    edges = _Edges(ctx.cfg.graph)
    kept: list[dict[str, Any]] = []
    rejected: list[dict[str, str]] = []
    have = {h: 0 for h in (*HOP_TYPES, RAG_ONLY)}
    seen: set[str] = set()
    docs: dict[str, Mapping[str, Any]] = {}  # the documents the chains' searches found: RAG-only questions' pool
    # the names documents gave that kept RAG→API hops looked up, by hop type: one question each (the question that
    # names the 시도 and the one that reaches it from a 동 differ; two census years of one 시도 asking the same do not)
    bridges: dict[str, set[str]] = {h: set() for h in HOP_TYPES}
    long_share = ctx.cfg.retrieval.long_hop_share
    quotas = {h: quota if HOPS[h] <= 3 else long_quota(quota, long_share) for h in HOP_TYPES}
    make = executor_factory(ctx.cfg, [ctx.domain], ctx.registry)
    await asyncio.to_thread(_warm, search)
    calls = list(ctx.calls)

    def reject(kind: str, reason: str, detail: str = "", code: str = "") -> None:
        rejected.append(
            {"hop_type": kind, "reason": reason, "detail": detail[:160], **({"code": code} if code else {})}
        )

    def want(kind: str) -> bool:
        return have[kind] < quotas[kind]

    cap = ctx.cfg.retrieval.multisource_max_per_answer
    used: dict[str, int] = {}

    def add(kind: str, actions: list[dict[str, Any]], query: str, answer: dict[str, Any], spec: dict[str, Any],
            junctions: list[dict[str, Any]], chain_edges: list[str], extra: dict[str, Any]) -> None:  # fmt: skip
        try:
            actions, spec = with_key_calls(actions, spec, key_calls, keyed)
        except KeyError as err:
            reject(kind, "api_call_failed", str(err))
            return
        key = sha256_digest([a["call_digest"] for a in actions] + [spec])
        if key in seen:
            reject(kind, "duplicate")
            return
        subjects = repeat_keys(answer, extra)
        if cap is not None and (full := [s for s in subjects if used.get(s, 0) >= cap]):
            reject(kind, "repeated_answer", full[0])
            return
        seen.add(key)
        for s in subjects:
            used[s] = used.get(s, 0) + 1
        have[kind] += 1
        kept.append(
            {"trajectory_id": key, "hop_type": kind, "hops": HOPS[kind], "domain": ctx.domain,
             "language": ctx.language, "query": query, "golden_actions": actions, "answer": answer,
             "answer_spec": spec, "junctions": junctions, "edges": chain_edges, **extra}
        )  # fmt: skip

    async def tail_chain(
        ex: Any, kind: str, head: _Head, f: str, e: str, gold: Mapping[str, Any], sres: Any, tres: Any,
        passages: Sequence[Mapping[str, Any]], spec2: ToolSpec, param: str, nf: rp.NameFact, res2: Any, step: int,
        doc: rp.DocRef, hidden: Sequence[str],
    ) -> bool:  # fmt: skip
        """The chain `kind` with one more API call after the passage's (RAG-API-API, API-RAG-API-API,
        API-API-RAG-API-API), kept when that type is below its share of `kind`'s chains (hop-count weights) and an
        API→API edge of the connectivity graph from the looked-up record leads to a lookup whose record answers what
        neither that record nor the passages state. True when a chain was kept."""
        tkind = f"{kind}-API"
        if tkind not in quotas or not want(tkind):
            return False
        counts = hop_count_weights(long_share)
        if not counts.get(HOPS[tkind]) or have[tkind] * counts[HOPS[kind]] > have[kind] * counts[HOPS[tkind]]:
            return False
        assert search is not None
        try:
            sing2, pl2 = phrasing._noun(ctx.frames.get(ctx.tid(spec2.name)) or {}, ctx.language, res2.args)
        except (phrasing.Unphraseable, KeyError) as x:
            reject(tkind, "unphraseable", f"{spec2.name}: {x}", "reference")
            return False
        up = phrasing.Ref(nf.phrase, True, sing2, pl2 if ctx.language != "ko" else sing2,
                          bare=re.sub(r"^the ", "", nf.phrase))  # fmt: skip
        title = str(gold.get("title") or "")
        prior = {str(x).strip().casefold() for x in _record_values(res2.records)}
        for spec3, fld, p3, res3, eid, ref3 in await _api_api_tail(ctx, ex, edges, spec2, res2, up, reject, tkind):
            frame3 = ctx.frames.get(ctx.tid(spec3.name)) or {}
            bound = res2.records[0].get(fld)
            # the record the passage or the question names already ('the album containing the longest track on the
            # album X' is X): no question
            named = [x for x in _record_values(res3.records) if entity_like(x)
                     and (states(title, x) or str(x).strip().casefold() in (e.casefold(), nf.value.casefold()))]  # fmt: skip
            if named:
                reject(tkind, "api_hop_unneeded", f"{spec3.name} finds {named[0]!r}, which the document names")
                continue
            fields = [x for x in _answer_field(res3.records, passages, bound, p3, frame3)
                      if str(res3.records[0][x]).strip().casefold() not in prior]  # fmt: skip
            if not fields:
                reject(tkind, "api_hop_unneeded", f"{spec3.name}: every field it adds is in {spec2.name}'s record")
                continue
            g = fields[int(rng.integers(len(fields)))]
            value = res3.records[0][g]
            try:
                query, short = rp.value_question(ref3.text, frame3, g, ctx.language)
            except phrasing.Unphraseable as x:
                reject(tkind, "unphraseable", f"{x.code}: {x}", "reference")
                continue
            said = [nf.value, str(bound), *(hidden if base_kind(kind) != "RAG-API" else ())]
            if base_kind(kind) != "RAG-API":
                said.append(e)
            if any(len(str(x)) >= 3 and states(query, x) for x in said):
                reject(tkind, "bridge_named_in_question", str(bound))
                continue
            if base_kind(kind) != "RAG-API" and await _documents_alone(ex, search, query, gold, k):
                reject(tkind, "documents_alone_suffice", query)
                continue
            first = base_kind(kind) == "RAG-API"  # the chain starts with the search for the named document
            actions, junctions, chain = chain_parts(None if first else head, search, tres if first else sres,
                                                    gold["id"], f, (spec2, param, res2), (spec3, fld, p3, res3, eid))  # fmt: skip
            answer = {"type": "number" if isinstance(value, int | float) else "string", "value": value,
                      "fields": [g]}  # fmt: skip
            before = have[tkind]
            add(tkind, actions, query, answer,
                {"kind": "value", "field": g, "calls": [{"step": step + 1, "index": 0}],
                 "apis_may_answer": nf.fact.derivable, "derived_by": list(nf.fact.derived_by)},
                junctions, chain,
                {"entity": e, "bridge": {"param": param, "value": nf.value, "passage": gold["id"]},
                 "answer_text": rp.value_answer(value, {**short, "subject": ref3.text}, ctx.language),
                 "realization": {"document": doc.text, "value": nf.phrase, "fact": nf.fact.match.pattern,
                                 "sentence": nf.sentence, "title": gold.get("title"), "record": ref3.text}})  # fmt: skip
            if have[tkind] > before:
                bridges[kind].add(nf.value.strip().casefold())
                return True
        return False

    async def chains_from(ex: Any, head: _Head) -> None:
        """The chains starting with the API calls of `head`: its last record's names lead to documents (API→RAG), each
        document gives a question of a hop type `head` can make (`head_kinds`)."""
        assert search is not None and ctx.passages is not None
        kinds_here = head_kinds(len(head.calls))
        weights = hop_weights(long_share, kinds_here)
        if not weights or all(not want(h) for h in weights):
            return
        first = kinds_here[0]
        spec1, res1 = head.last
        n_api = len(head.calls)
        named = stated_values(head.calls[0][0], head.calls[0][1].args)
        upstream = head.upstream_values() if n_api > 1 else set()
        frame1 = ctx.frames.get(ctx.tid(spec1.name)) or {}
        found: list[tuple[str, str, Mapping[str, Any], Any, str | None]] = []
        searched: dict[str, list[Any]] = {}  # the question's stated values → their passages (`_documents_name`)
        for f, e in _bridge_fields(ctx, spec1, res1.records[0], named)[:3]:
            spelled = next((n for n in sorted(named) if spells(n, e)), None)
            if spelled is not None:
                reject(first, "api_hop_unneeded", f"{f}={e!r} is spelled by the stated {spelled!r}")
                continue
            if e.strip().casefold() in upstream:
                # the record before the last call holds the entity already: the last API call is no hop
                reject(first, "api_hop_unneeded", f"{spec1.name}.{f}={e!r} is in the record before it")
                continue
            skipped_by = await _documents_name(ex, search, named, e, k, searched)
            ftype = str(((frame1.get("fields") or {}).get(f) or {}).get("type") or "")
            # the documents about the entity: their title names it (a passage that merely mentions it is not);
            # searched the way the corpus titles such documents ('서울특별시 인구주택총조사 결과', 'JFK weather')
            golds: list[Mapping[str, Any]] = []
            sres = None
            for query in ctx.passages.queries(ftype, e) or [e]:
                sres = await ex.call(search, {"query": query, "k": max(k, _DOCS_SEARCHED)})
                golds = _golds_of(ctx, sres.records, e)
                if golds:
                    break
            assert sres is not None
            edges.trial("API→RAG", spec1.name, f, search.name, "query", sres, bool(golds))
            if not golds:
                reject(first, "no_passage_for_entity", f"{f}={e!r}")
                continue
            # several documents about one entity (an airport's bulletins of different days, a province's census
            # years): up to `_DOCS_PER_ENTITY` of them, drawn, each its own question
            for j in rng.permutation(len(golds))[:_DOCS_PER_ENTITY]:
                found.append((f, e, golds[int(j)], sres, skipped_by))
            docs.update({str(g["id"]): g for g in golds})
        api_values = [v for _, res in head.calls for v in _record_values(res.records)]
        for f, e, gold, sres, skipped_by in found:
            if all(not want(h) for h in weights):
                break
            title = str(gold.get("title") or "")
            tres: Any = None
            if title:
                # the golden search names the document the question is about ('JFK weather 2013-05-08',
                # '2015년 서울특별시 인구주택총조사 결과'), not only its subject: the question states the day or
                # the census year, and a search for 'JFK weather' finds the day by chance
                tres = await ex.call(search, {"query": title, "k": k})
                if gold["id"] not in {p["id"] for p in tres.records}:
                    reject(first, "no_passage_for_entity", f"title {title!r}")
                    continue
                sres = tres
            draw = rng.choice(list(weights), p=list(weights.values()))
            # the drawn type first, then the others; a type furthest below its VAKRA share goes before the draw (a
            # 3-hop chain is possible from few documents: one that allows it is not spent on a 2-hop question
            # while the 3-hop type has none; s12 demo: API-RAG-API 0)
            for kind in kind_order(str(draw), have, weights):
                if not want(kind):
                    continue
                base = base_kind(kind)
                if skipped_by is not None and not base.startswith("RAG-"):  # the chain's first hops are those API calls
                    reject(kind, "api_hop_in_documents", f"a search for {skipped_by!r} names {e!r}")
                    continue
                try:
                    doc = (rp.named_document(ctx.passages, title, ctx.language) if base == "RAG-API"
                           else _bridge_doc(ctx, spec1, res1, f, title, head.ref, api_values))  # fmt: skip
                except rp.RagUnphraseable as x:
                    reject(kind, "unphraseable", f"{x.code}: {x}", x.code)
                    continue
                sents = _sentences(str(gold.get("text") or ""))
                # the bound values of the API→API hops: the question must not state them
                hidden = [h for j, (_, res) in zip(head.junctions, head.calls[1:], strict=False)
                          if len(h := str(res.args.get(j["to"].split(".", 1)[1]))) >= 3]  # fmt: skip
                if base == "API-RAG":
                    built = _api_rag(ctx, doc, sents, e, api_values, rng, asked_facts(kept))
                    if isinstance(built, tuple):
                        reject(kind, *built)
                        continue
                    fact = built
                    query = fact.question
                    if states(query, e) or any(states(query, h) for h in hidden):
                        reject(kind, "bridge_named_in_question", e)
                        continue
                    if await _documents_alone(ex, search, query, gold, k):
                        reject(kind, "documents_alone_suffice", query)
                        continue
                    masked = _mask(fact.sentence, fact.shown, "___")
                    answer = {"type": "number", "value": fact.value, "fields": ["text"]}
                    s_step = n_api + 1
                    actions, junctions, chain = chain_parts(head, search, sres, gold["id"], f)
                    add(kind, actions, query, answer,
                        {"kind": "passage_value", "calls": [{"step": s_step, "index": 0, "record": {"id": gold["id"]}}],
                         "passage_id": gold["id"], "value": answer["value"], "statement": masked,
                         "apis_may_answer": fact.fact.derivable, "derived_by": list(fact.fact.derived_by)},
                        junctions, chain,
                        {"entity": e, "answer_text": fact.answer_text,
                         "realization": {"document": doc.text, "fact": fact.fact.match.pattern,
                                         "sentence": fact.sentence, "title": gold.get("title")}})  # fmt: skip
                    break
                # RAG→API junction from the gold passage
                hop2 = await _rag_api_hop(ctx, ex, edges, search, gold, doc, sents, e, rng, bridges[kind])
                if isinstance(hop2[0], str):
                    reject(kind, *hop2)
                    continue
                spec2, param, nf, res2 = hop2
                v = nf.value
                if base == "RAG-API":
                    tres = await ex.call(search, {"query": gold["title"], "k": k})
                    if gold["id"] not in {p["id"] for p in tres.records}:
                        reject(kind, "no_passage_for_entity", f"title {gold['title']!r}")
                        continue
                    passages, step = tres.records, 2
                else:
                    passages, step = sres.records, n_api + 2
                # one more API call after the passage's where the longer type is below its share (else as it is)
                if await tail_chain(ex, kind, head, f, e, gold, sres, tres, passages, spec2, param, nf, res2, step,
                                    doc, hidden):  # fmt: skip
                    break
                frame2 = ctx.frames.get(ctx.tid(spec2.name)) or {}
                fields = [x for x in _answer_field(res2.records, passages, v, param, frame2)
                          if x not in nf.fact.states]  # fmt: skip
                if not fields:
                    reject(kind, "answer_in_documents", f"{spec2.name}({param}={v!r})")
                    continue
                g = fields[int(rng.integers(len(fields)))]
                value = res2.records[0][g]
                try:
                    query, short = rp.value_question(nf.phrase, frame2, g, ctx.language)
                except phrasing.Unphraseable as x:
                    reject(kind, "unphraseable", f"{x.code}: {x}", "reference")
                    continue
                if states(query, v) or (
                    base == "API-RAG-API" and (states(query, e) or any(states(query, h) for h in hidden))
                ):
                    reject(kind, "bridge_named_in_question", v)
                    continue
                if base == "API-RAG-API" and await _documents_alone(ex, search, query, gold, k):
                    reject(kind, "documents_alone_suffice", query)
                    continue
                answer = {"type": "number" if isinstance(value, int | float) else "string", "value": value,
                          "fields": [g]}  # fmt: skip
                if base == "RAG-API":
                    actions, junctions, chain = chain_parts(None, search, tres, gold["id"], "", (spec2, param, res2))
                else:
                    actions, junctions, chain = chain_parts(head, search, sres, gold["id"], f, (spec2, param, res2))
                bridges[kind].add(v.strip().casefold())
                add(kind, actions, query, answer,
                    {"kind": "value", "field": g, "calls": [{"step": step, "index": 0}],
                     "apis_may_answer": nf.fact.derivable, "derived_by": list(nf.fact.derived_by)},
                    junctions, chain,
                    {"entity": e, "bridge": {"param": param, "value": v, "passage": gold["id"]},
                     "answer_text": rp.value_answer(value, {**short, "subject": nf.answer_phrase or nf.phrase},
                                                    ctx.language, _bridge_said(nf, display_name(frame2, v))),
                     "realization": {"document": doc.text, "value": nf.phrase, "fact": nf.fact.match.pattern,
                                     "sentence": nf.sentence, "title": gold.get("title")}})  # fmt: skip
                break

    if ctx.passages is None:
        reject("API-RAG", "unphraseable", f"no lexicon/passages/{ctx.domain}.yaml in the project", "no_lexicon")
        return {"kept": kept, "rejected": rejected, "edges": edges.rows(), "calls": 0}

    keyed = {n for n, s in ctx.apis.items() if s.generic_params.key}
    key_calls: dict[str, dict[str, Any]] = {}
    async with make() as ex:
        # the calls that issue the keys the API hops need: golden actions of every chain that uses the platform
        for p in sorted({ctx.apis[n].platform for n in keyed}):
            kspec = ctx.registry.key_tool(p)
            if kspec is None:
                continue
            kres = await ex.call(kspec, {})
            if kres.outcome.is_success:
                key_calls[p] = _action(1, kspec, kres)
        calls += await _seeded_calls(ctx, ex, search, rng, {str(r.get("call_digest")) for r in calls})
        order = [int(x) for x in rng.permutation(len(calls))]
        for i in order:
            if all(not want(h) for h in HOP_TYPES):
                break
            row = calls[int(i)]
            spec0 = ctx.apis[row["tool"]]
            res0 = await ex.call(spec0, row.get("args") or {})
            if not res0.outcome.is_success or len(res0.records) != 1:
                reject("API-RAG", "api_call_failed", f"{spec0.name}: {res0.outcome}")
                continue
            heads = [_Head([(spec0, res0)])] if any(want(h) for h in BASE_HOP_TYPES) else []
            if any(want(h) for h in LONG_HOP_TYPES):
                heads += await _api_api_heads(ctx, ex, edges, spec0, res0, reject)
            for head in heads:
                await chains_from(ex, head)
        # RAG-only (hop type RAG): a number one passage states, asked about the document named by itself
        n_rag = rag_only_quota(ctx.cfg.retrieval.rag_only_share, sum(have[h] for h in HOP_TYPES))
        if n_rag:
            if len(docs) < 3 * n_rag:
                docs.update(await _subject_documents(ctx, ex, search, rng))
            used_ids = {pid for t in kept for a in t["golden_actions"] for pid in a.get("passage_ids") or []}
            for gold in _rag_only_order(docs, used_ids, rng):
                if have[RAG_ONLY] >= n_rag:
                    break
                made = await _rag_only(ctx, ex, search, gold, rng, k, asked_facts(kept))
                if isinstance(made[0], str):  # (reason, detail, code)
                    reject(RAG_ONLY, *made)
                    continue
                fact, doc, tres = made
                add(RAG_ONLY, *rag_only_chain(_action(1, search, tres, [gold["id"]]), gold, fact, doc))
        calls_made = sum(sum(c.values()) for c in ex.call_counts().values())
    return {"kept": kept, "rejected": rejected, "edges": edges.rows(), "calls": calls_made}


def _warm(search: ToolSpec) -> None:
    """Open the search tool's index and load its query model once, outside the executor's per-call timeout
    (a first search that loads the model on busy cores would time out and open the tool's circuit)."""
    from factory.tools.retrieval import parse_index_path
    from factory.tools.transports.retrieval import open_index

    table, version, model = parse_index_path(search.path)
    open_index(search.source.base_url or "", table, version, model).search("warm up", 1)


def _api_rag(
    ctx: _Context, doc: rp.DocRef, sents: Sequence[str], e: str, api_values: Sequence[Any], rng: np.random.Generator,
    asked: Mapping[str, int] | None = None,
) -> rp.NumberFact | tuple[str, str, str]:  # fmt: skip
    """A number fact of the passage a question may ask for, or (reason, detail, code)."""
    assert ctx.passages is not None
    try:
        facts = rp.number_facts(ctx.passages, doc, sents, ctx.language)
    except rp.RagUnphraseable as x:
        return "unphraseable", f"{x.code}: {x}", x.code
    if not facts:
        return "unphraseable", f"no reviewed fact of {doc.form.kind} matches the passage", "passage_fact"
    # the passage's number the APIs of the chain do not give (cross-source answerability), not part of the entity
    ok = [x for x in facts if not states(e, x.shown) and not any(states(str(v), x.shown) for v in api_values)]
    if not ok:
        return "answer_from_apis", f"{len(facts)} facts, every number in the chain's API records", ""
    ok = documents_only(ok, asked)
    return ok[int(rng.integers(len(ok)))]


def documents_only(facts: Sequence[Any], asked: Mapping[str, int] | None = None) -> list[Any]:
    """The number facts of a passage no API can give, when it states any: a question about them needs the documents,
    where a patient agent computes a derivable one from the API rows (issue 17 gap 4: 0 of 7 Korean multi-source
    tasks needed the bulletins); among them those the kept chains asked least (`asked`: fact pattern → chains), so
    two district bulletins are asked different facts, not one question twice ('궁정동이 있는 구의 … 소아청소년과 의사'
    and '율전동이 있는 구의 …' were judged near duplicates). A passage whose facts are all derivable draws among all
    of them, as before."""
    only = [f for f in facts if not f.fact.derivable]
    if not only:
        return list(facts)
    times = {id(f): (asked or {}).get(f.fact.match.pattern, 0) for f in only}
    least = min(times.values())
    return [f for f in only if times[id(f)] == least]


def asked_facts(kept: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """Fact pattern → the kept chains that ask it (their realization's `fact`)."""
    out: dict[str, int] = {}
    for t in kept:
        fact = (t.get("realization") or {}).get("fact")
        if fact:
            out[str(fact)] = out.get(str(fact), 0) + 1
    return out


def _rag_only_order(
    docs: Mapping[str, Mapping[str, Any]], used: set[str], rng: np.random.Generator
) -> list[Mapping[str, Any]]:
    """The candidate documents of RAG-only questions in a drawn order, those no kept chain cites first (a RAG-only
    question about a chain's passage would ask what the chain's question asks, by another road)."""
    ids = sorted(docs)
    drawn = [ids[int(j)] for j in rng.permutation(len(ids))]
    return [docs[i] for i in sorted(drawn, key=lambda i: i in used)]


async def _subject_documents(
    ctx: _Context, ex: Any, search: ToolSpec, rng: np.random.Generator, searches: int = 8
) -> dict[str, Mapping[str, Any]]:
    """Documents about values the APIs take of a type some document is about (an airport code 'EWR' → its bulletins):
    up to `searches` searches, each keeping the passages whose title names the value (`_golds_of`)."""
    assert ctx.passages is not None
    subjects = {t for d in ctx.passages.documents for t in d.subject}
    pool = sorted(
        {(str(ctx.types.param_type(ctx.tid(tool), p) or "").split("@")[0], v)
         for (tool, p), values in ctx.known.items() for v in values}
    )  # fmt: skip
    pool = [(t, v) for t, v in pool if t in subjects]
    out: dict[str, Mapping[str, Any]] = {}
    for j in rng.permutation(len(pool))[:searches]:
        ptype, v = pool[int(j)]
        queries = ctx.passages.queries(ptype, v) or [v]
        res = await ex.call(search, {"query": queries[0], "k": _DOCS_SEARCHED})
        if res.outcome.is_success:
            out.update({str(g["id"]): g for g in _golds_of(ctx, res.records, v)})
    return out


async def _rag_only(
    ctx: _Context, ex: Any, search: ToolSpec, gold: Mapping[str, Any], rng: np.random.Generator, k: int,
    asked: Mapping[str, int] | None = None,
) -> tuple[rp.NumberFact, rp.DocRef, Any] | tuple[str, str, str]:  # fmt: skip
    """(fact, document, golden search) of a RAG-only question about `gold`, or (reason, detail, code): the document
    named by itself (`rag_phrasing.named_document`), a number a reviewed fact of its passage states that the question
    does not (a census year is no answer), and the search for its title returning it."""
    assert ctx.passages is not None
    title = str(gold.get("title") or "")
    try:
        doc = rp.named_document(ctx.passages, title, ctx.language)
        facts = rp.number_facts(ctx.passages, doc, _sentences(str(gold.get("text") or "")), ctx.language)
    except rp.RagUnphraseable as x:
        return "unphraseable", f"{x.code}: {x}", x.code
    if not facts:
        return "unphraseable", f"no reviewed fact of {doc.form.kind} matches the passage", "passage_fact"
    ok = [x for x in facts if not states(x.question, x.shown)]
    if not ok:
        return "answer_named_in_question", f"{len(facts)} facts of {title!r}, each number stated by its question", ""
    ok = documents_only(ok, asked)
    fact = ok[int(rng.integers(len(ok)))]
    tres = await ex.call(search, {"query": title, "k": k})
    if not tres.outcome.is_success or gold["id"] not in {p["id"] for p in tres.records}:
        return "no_passage_for_entity", f"title {title!r}", ""
    return fact, doc, tres


def rag_only_chain(
    search_action: dict[str, Any], gold: Mapping[str, Any], fact: rp.NumberFact, doc: rp.DocRef
) -> tuple[list[dict[str, Any]], str, dict[str, Any], dict[str, Any], list[dict[str, Any]], list[str], dict[str, Any]]:
    """(golden actions, question, answer, answer spec, junctions, edges, extra) of a RAG-only trajectory: the search
    citing `gold`, the answer the number `fact` reads off its passage (a `passage_value` spec the replay and the audit
    re-derive; `apis_may_answer` when the lexicon marks the fact derivable, which policies read)."""
    answer = {"type": "number", "value": fact.value, "fields": ["text"]}
    spec = {"kind": "passage_value", "calls": [{"step": 1, "index": 0, "record": {"id": gold["id"]}}],
            "passage_id": gold["id"], "value": fact.value, "statement": _mask(fact.sentence, fact.shown, "___"),
            "apis_may_answer": fact.fact.derivable, "derived_by": list(fact.fact.derived_by)}  # fmt: skip
    extra = {"entity": doc.parts.get("subject") or doc.text, "answer_text": fact.answer_text,
             "realization": {"document": doc.text, "fact": fact.fact.match.pattern, "sentence": fact.sentence,
                             "title": gold.get("title")}}  # fmt: skip
    return [search_action], fact.question, answer, spec, [], [], extra


async def _seeded_calls(
    ctx: _Context, ex: Any, search: ToolSpec, rng: np.random.Generator, have: set[str]
) -> list[dict[str, Any]]:
    """More first hops, found from what the corpus is about: a value observed for an API parameter of a document
    subject's type (an airport code 'EWR') whose documents the search finds is looked up (`get_airport_by_iata(EWR)`,
    a discovery call outside any golden path); every other name or public code of that record which an API parameter
    takes (its ICAO code, its name) becomes a first hop that leads back to the subject ('get_airport_by_icao(KEWR)'
    → EWR → the EWR bulletins). The probes alone rarely hold such calls: they look entities up by the code the corpus
    titles use, which a question may not state (blind read s9: two aviation API+RAG tasks, both from KJFK)."""
    assert ctx.passages is not None
    subjects = {t for d in ctx.passages.documents for t in d.subject}
    out: list[dict[str, Any]] = []
    for (tool, p), values in sorted(ctx.known.items()):
        spec = ctx.apis[tool]
        frame = ctx.frames.get(ctx.tid(tool)) or {}
        ptype = str(ctx.types.param_type(ctx.tid(tool), p) or "").split("@")[0]
        if ptype not in subjects or (frame.get("params", {}).get(p) or {}).get("kind") != "display":
            continue
        generic = set(spec.generic_params.names())
        base = {x: v for x, v in ctx.base_args.get(tool, {}).items() if x in generic}
        pool = sorted(values)
        for j in rng.permutation(len(pool))[:40]:
            if len(out) >= _SEEDED_CALLS:
                return out
            v = pool[int(j)]
            queries = ctx.passages.queries(ptype, v) or [v]
            sres = await ex.call(search, {"query": queries[0], "k": _DOCS_SEARCHED})
            if not sres.outcome.is_success or not _golds_of(ctx, sres.records, v):
                continue
            res = await ex.call(spec, {**base, p: v})
            if not res.outcome.is_success or len(res.records) != 1:
                continue
            record = res.records[0]
            fields = frame.get("fields") or {}
            for f, x in sorted(record.items()):
                if f == p or not entity_like(x) or str(x).strip().casefold() == v.strip().casefold():
                    continue
                if spells(str(x), v):  # 'KJFK' for JFK's bulletins: the question would spell the bridge
                    continue
                ftype = str((fields.get(f) or {}).get("type") or "")
                if not ftype:
                    continue
                for tool2, p2 in _accepting_params(ctx, ftype.split("@")[0]):
                    frame2 = ctx.frames.get(ctx.tid(tool2)) or {}
                    if (frame2.get("params", {}).get(p2) or {}).get("kind") != "display":
                        continue
                    spec2 = ctx.apis[tool2]
                    keep = set(spec2.generic_params.names()) | set(spec2.required_params)
                    args = {**{a: y for a, y in ctx.base_args.get(tool2, {}).items() if a in keep and a != p2}, p2: x}
                    digest = f"{tool2}:{p2}={x}"
                    if digest not in have:
                        have.add(digest)
                        out.append({"tool": tool2, "args": args, "call_digest": digest, "seeded_from": f"{tool}({v})"})
    return out


def stated_values(spec: ToolSpec, args: Mapping[str, Any]) -> set[str]:
    """The values a question states of a call `spec` was sent: its arguments but the generic ones (the key, the
    response format, paging), which no question states. A search for the key placeholder or 'json' returns some
    passage, and one naming the entity the call found dropped the chain as `api_hop_in_documents` (korea demo: 46 of
    104 rejections, '<KEY>' and 'json' named 서울특별시 and 경기도)."""
    generic = set(spec.generic_params.names())
    return {str(v) for p, v in args.items() if p not in generic and v != _KEY}


async def _documents_name(
    ex: Any, search: ToolSpec, named: set[str], e: str, k: int, searched: dict[str, list[Any]]
) -> str | None:
    """The value a first API call was sent (what the question states) whose own document search returns a passage
    naming `e`, the entity that call found; None when every such search leaves the call needed. Numbers and
    one- or two-character values (limits, flags) are no search a reader would make. `searched` keeps each value's
    passages, so the head's other entities are checked without searching again."""
    for n in sorted(named):
        if len(n.strip()) < 3 or n.replace(".", "").isdigit() or n.casefold() == e.casefold():
            continue
        if n not in searched:
            searched[n] = list((await ex.call(search, {"query": n, "k": k})).records or [])
        if any(states(str(p.get("text") or ""), e) for p in searched[n]):
            return n
    return None


async def _documents_alone(ex: Any, search: ToolSpec, query: str, gold: Mapping[str, Any], k: int) -> bool:
    res = await ex.call(search, {"query": query, "k": k})
    return bool(res.records) and res.records[0].get("id") == gold.get("id")


def _accepting_params(ctx: _Context, vtype: str) -> list[tuple[str, str]]:
    """(tool, param) of the domain's APIs whose value type accepts `vtype` (equal or narrower)."""
    out = []
    for name, spec in sorted(ctx.apis.items()):
        generic = set(spec.generic_params.names())
        for p in spec.input_schema.get("properties") or {}:
            if p in generic:
                continue
            ptype = ctx.types.param_type(ctx.tid(name), p)
            if ptype and (ptype.split("@")[0] == vtype or ctx.types.accepts(ptype, vtype) in ("equal", "subtype")):
                out.append((name, p))
    return out


async def _rag_api_hop(
    ctx: _Context, ex: Any, edges: _Edges, search: ToolSpec, gold: Mapping[str, Any], doc: rp.DocRef,
    sents: Sequence[str], e: str, rng: np.random.Generator, used: set[str] | frozenset[str] = frozenset(),
) -> tuple[ToolSpec, str, rp.NameFact, Any] | tuple[str, str, str]:  # fmt: skip
    """(api spec, param, name fact, result) of a RAG→API junction from `gold`: a name a reviewed fact of the passage
    names, of a value type an API parameter takes, that the API resolves to one record; or (reason, detail, code).
    A name in `used` (a kept task already looked it up) is not asked again: another fact of the passage is (the
    smallest district where the largest was asked), else ``near_duplicate``."""
    assert ctx.passages is not None
    try:
        # a reviewed fact's name; a two-syllable Korean one too ('중구', '서구': names, not fragments)
        names = [nf for nf in rp.name_facts(ctx.passages, doc, sents, ctx.language)
                 if (entity_like(nf.value) or re.fullmatch(r"[가-힣]{2}", nf.value.strip()))
                 and nf.value != e and not states(e, nf.value)]  # fmt: skip
    except rp.RagUnphraseable as x:
        return "unphraseable", f"{x.code}: {x}", x.code
    fresh = [nf for nf in names if nf.value.strip().casefold() not in used]
    if names and not fresh:
        return "near_duplicate", ", ".join(sorted({nf.value for nf in names})), ""
    names = fresh
    options = [(tool, p, nf) for nf in names for tool, p in _accepting_params(ctx, nf.type)]
    if not options:
        found = ", ".join(f"{n.value} ({n.type})" for n in names) or "none"
        return "unphraseable", f"no reviewed name of {doc.form.kind} that an API takes (names: {found})", "value_fact"
    # the names only the documents give first (`documents_only`), each kind in the drawn order
    for j in sorted(rng.permutation(len(options)), key=lambda i: options[int(i)][2].fact.derivable)[:6]:
        tool, param, nf = options[int(j)]
        spec2 = ctx.apis[tool]
        generic = set(spec2.generic_params.names())
        base = {k: x for k, x in ctx.base_args.get(tool, {}).items() if k in generic or k in spec2.required_params}
        res2 = await ex.call(spec2, {**base, param: nf.value})
        if res2.outcome.is_success and len(res2.records) > 1:
            # a name several records share ('중구': one in each of six 시도) is looked up with what the question states
            # of the document (its 시도), sent to a parameter that narrows by it
            res2 = await _narrowed(ctx, ex, spec2, {**base, param: nf.value}, param, res2, doc) or res2
        # one record back, and it is the value the passage states (the name or title field equals it)
        ok = (
            res2.outcome.is_success
            and len(res2.records) == 1
            and any(str(x).strip().casefold() == nf.value.casefold() for x in res2.records[0].values()
                    if isinstance(x, str))
        )  # fmt: skip
        edges.trial("RAG→API", search.name, "text", spec2.name, param, res2, ok)
        if ok:
            return spec2, param, nf, res2
    return "api_call_failed", f"{len(options)} name bindings, none resolved to one record", ""


def stated_parts(doc: rp.DocRef) -> list[str]:
    """The title parts of the document that its question phrase states (the 시도 of a district's bulletin; its subject
    only where the document is named by itself)."""
    return [v for k, v in sorted(doc.parts.items()) if v and (k != "subject" or states(doc.text, v))]


async def _narrowed(
    ctx: _Context, ex: Any, spec: ToolSpec, args: Mapping[str, Any], param: str, res: Any, doc: rp.DocRef
) -> Any:
    """The call of `spec` with `args` narrowed to one record by a value the question states (`stated_parts`), sent to
    another parameter that takes it: a value observed for it (`ctx.known`), or the value of the field of the same
    name in the records the broad call returned (each names its 시도 in `sidoNm`). None when no such call gives one
    record holding the value."""
    generic = set(spec.generic_params.names())
    for p2 in sorted(spec.input_schema.get("properties") or {}):
        if p2 in generic or p2 == param or p2 in args:
            continue
        held = {str(r.get(p2)).strip().casefold() for r in res.records if r.get(p2) not in (None, "")}
        for v2 in stated_parts(doc):
            if v2 not in ctx.known.get((spec.name, p2), set()) and v2.strip().casefold() not in held:
                continue
            res2 = await ex.call(spec, {**args, p2: v2})
            if (
                res2.outcome.is_success
                and len(res2.records) == 1
                and any(str(x).strip().casefold() == v2.strip().casefold() for x in res2.records[0].values())
            ):
                return res2
    return None


def build_multisource(
    domain: str,
    inventories: Mapping[str, Any],
    probes: Mapping[str, Any],
    cfg: ProjectConfig,
    graph: Mapping[str, Any] | None = None,
    lexicon: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The API+RAG trajectories of a domain (value `multisource` of the trajectories asset) and metadata; questions
    are composed from the tool frames of `lexicon` (the domain's tool_lexicon value, else rules over the specs) and the
    project's passage lexicon (`rag_phrasing`). A domain without a search tool gets an empty value."""
    frames = ((lexicon or {}).get("nouns") or {}).get("tools") or None
    ctx = _Context(domain, inventories, probes, cfg, graph, frames)
    if ctx.search is None:
        return {"configured": False, "trajectories": [], "rejected": [], "edges": []}, {"multisource/configured": 0}
    rng = np.random.default_rng([cfg.seed, 17, sum(domain.encode())])
    quota = cfg.retrieval.multisource_per_hop or cfg.synthesis.per_pattern
    out = asyncio.run(_synthesize(ctx, rng, quota, cfg.retrieval.default_k))
    value = {"configured": True, "search_tool": ctx.search.name, "index": ctx.search.path,
             "trajectories": out["kept"], "rejected": out["rejected"], "edges": out["edges"], "calls": out["calls"],
             # the draws: from one API call (VAKRA's 2/3-hop weights), after an API→API edge, and per hop count
             "hop_weights": hop_weights(cfg.retrieval.long_hop_share, head_kinds(1)),
             "long_hop_weights": hop_weights(cfg.retrieval.long_hop_share, head_kinds(2)),
             "hop_count_weights": {str(c): w for c, w in hop_count_weights(cfg.retrieval.long_hop_share).items()}}  # fmt: skip
    return value, multisource_metadata(value)


def multisource_metadata(value: Mapping[str, Any]) -> dict[str, Any]:
    trajs = value.get("trajectories") or []
    meta: dict[str, Any] = {"multisource/configured": int(bool(value.get("configured")))}
    for h in (*HOP_TYPES, RAG_ONLY):
        meta[f"multisource/{h}"] = sum(1 for t in trajs if t["hop_type"] == h)
    reasons: dict[str, int] = {}
    for r in value.get("rejected") or []:
        reasons[r["reason"]] = reasons.get(r["reason"], 0) + 1
    meta.update({f"multisource/rejected/{k}": n for k, n in sorted(reasons.items())})
    codes: dict[str, int] = {}
    for r in value.get("rejected") or []:
        if r["reason"] == "unphraseable":
            codes[r.get("code") or "other"] = codes.get(r.get("code") or "other", 0) + 1
    meta.update({f"multisource/unphraseable/{k}": n for k, n in sorted(codes.items())})
    meta["multisource/edges"] = len(value.get("edges") or [])
    meta["multisource/edge_trials"] = sum(e["trials"] for e in value.get("edges") or [])
    return meta


# --------------------------------------------------------------------------- tasks


def _answer_text(value: Any, lang: str) -> str:
    shown = f"{value:,}" if isinstance(value, int) else str(value)
    return f"답은 {shown}입니다." if lang == "ko" else f"The answer is {shown}."


def task_records(
    multisource: Mapping[str, Any] | None,
    inventory: Mapping[str, Any],
    cfg: ProjectConfig,
    run_id: str | None,
    fingerprint: str = "",
) -> list[dict[str, Any]]:
    """The Task rows (generated_queries) of a domain's API+RAG trajectories."""
    out: list[dict[str, Any]] = []
    if not multisource:
        return out
    registry = ToolRegistry.from_inventory(inventory)
    key_tools = {s.platform: s.name for s in registry.specs() if s.key_acquisition is not None}
    syn = cfg.synthesis
    for t in multisource.get("trajectories") or []:
        golden = [{k: v for k, v in a.items() if k in GoldenAction.model_fields} for a in t["golden_actions"]]
        platforms = sorted({a["platform"] for a in golden})
        tools = sorted({a["tool"] for a in golden})
        pool = sorted(s.name for s in registry.specs() if s.platform in platforms and s.key_acquisition is None)
        distract = [n for n in pool if n not in tools][: syn.distractors]
        lang = t["language"]
        query = phrasing.qualifiers_after(t["query"], lang)
        task = Task(
            id=task_id(t["domain"], golden, query),
            domain=t["domain"],
            platforms=platforms,
            language=lang,
            query=query,
            templated_query=query,
            query_source="template",
            answer=Answer(
                type=t["answer"]["type"],
                value=t["answer"]["value"],
                # the answer says how it counted as the question does ('일반구 단위로 보면 …'), not '시·군·구(일반구 단위)는'
                text=phrasing.qualifiers_after(t.get("answer_text") or _answer_text(t["answer"]["value"], lang), lang),
                fields=t["answer"]["fields"],
            ),  # fmt: skip
            pattern="+".join(j["type"] for j in t["junctions"]) or t["hop_type"],  # RAG-only: one search, no junction
            category="SEQ",
            junctions=[Junction.model_validate(j) for j in t["junctions"]],
            golden_actions=[GoldenAction.model_validate(a) for a in golden],
            answer_spec=t["answer_spec"],
            available_tools=sorted(set(tools) | set(distract)),
            system_state={
                "current_date": syn.current_date,
                "api_key": {"acquire_with": {p: n for p, n in key_tools.items() if p in platforms}},
            },  # fmt: skip
            max_allowed_calls=math.ceil(len(golden) * syn.headroom),
            reward_basis=["RESPONSE", "ACTION"],
            hop_type=t["hop_type"],
            lineage=Lineage(
                trajectory_id=t["trajectory_id"],
                run_id=run_id,
                surface={t["domain"]: fingerprint},
                edges=[{"edge_id": e} for e in t["edges"]],
                call_digests=[a["call_digest"] for a in golden],
            ),  # fmt: skip
        )
        out.append(task.model_dump(mode="json", by_alias=True))
    return out


# --------------------------------------------------------------------------- replay


async def replay(task: Mapping[str, Any], ex: Any) -> dict[str, Any]:
    """Re-execute a multi-source task's golden actions with `ex` (a ToolExecutor over its tools): every
    search must return the passages its step used, every API argument bound from a passage must be stated
    by one of them, and the answer is recomputed from the responses. Returns {ok, answer, problems}."""
    problems: list[str] = []
    results: dict[tuple[int, int], Any] = {}
    passages: dict[str, Mapping[str, Any]] = {}
    index: dict[int, int] = {}
    for a in task["golden_actions"]:
        step = int(a["step"])
        i = index.get(step, 0)
        index[step] = i + 1
        res = await ex.call(a["tool"], a["args"])
        results[(step, i)] = res
        if not res.outcome.is_success:
            problems.append(f"step {step} {a['tool']}: {res.outcome}")
            continue
        if a.get("source_type") == "retrieval":
            got = {p["id"]: p for p in res.records}
            missing = [pid for pid in a.get("passage_ids") or [] if pid not in got]
            if missing:
                problems.append(f"step {step} {a['tool']}: passages {missing} not returned")
            passages.update({pid: got[pid] for pid in a.get("passage_ids") or [] if pid in got})
    problems += _api_links(task, results)
    spec = task["answer_spec"]
    answer: Any = None
    if spec.get("kind") == "passage_value":
        p = passages.get(spec["passage_id"])
        stmt = str(spec.get("statement") or "")
        size = abs(spec["value"]) if isinstance(spec["value"], int | float) else spec["value"]  # signed: '0.6% 감소'
        if p is not None and states(str(p.get("text") or ""), size):
            before = stmt.split("___")[0].strip().split("[")[0].strip()
            if before and before not in str(p.get("text") or ""):
                problems.append("the passage no longer makes the statement")
            answer = spec["value"]
        else:
            problems.append("the passage does not state the answer")
    else:
        ref = spec["calls"][0]
        res = results.get((int(ref["step"]), int(ref.get("index", 0))))
        if res is not None and res.records:
            answer = res.records[0].get(spec["field"])
        searched = [int(a["step"]) for a in task["golden_actions"] if a.get("source_type") == "retrieval"]
        search_tools = {a["tool"] for a in task["golden_actions"] if a.get("source_type") == "retrieval"}
        # the parameters a passage value binds (RAG→API junctions); an API call after one that an API→API junction
        # binds (RAG-API-API) is checked by `_api_links`. Without junctions: every API call after a search
        from_passage = {
            tuple(str(j["to"]).split(".", 1))
            for j in task.get("junctions") or []
            if str(j.get("from", "")).split(".", 1)[0] in search_tools and "." in str(j.get("to", ""))
        }
        for a in task["golden_actions"]:
            # an API call after a search (not the first hop, nor a key call) is bound by a passage value
            if a.get("source_type") == "api" and passages and searched and int(a["step"]) > min(searched):
                if task.get("junctions") and not any(t == a["tool"] for t, _ in from_passage):
                    continue
                bound = [v for p, v in a["args"].items() if entity_like(v)
                         and (not task.get("junctions") or (a["tool"], p) in from_passage)]  # fmt: skip
                if bound and not any(states(_passage_text(p), v) for p in passages.values() for v in bound):
                    problems.append(f"step {a['step']} {a['tool']}: no argument is stated by the passages used")
    ok = not problems and answer == task["answer"]["value"]
    return {"ok": ok, "answer": answer, "problems": problems}


def _api_links(task: Mapping[str, Any], results: Mapping[tuple[int, int], Any]) -> list[str]:
    """Problems of the API→API junctions of a replayed chain (`API-API-RAG`, `API-API-RAG-API`): the argument a later
    API call was sent must be the upstream record's field value in the replayed responses."""
    actions = task["golden_actions"]
    api = {a["tool"] for a in actions if a.get("source_type") == "api"}
    at: list[tuple[int, int]] = []
    seen: dict[int, int] = {}
    for a in actions:
        step = int(a["step"])
        at.append((step, seen.get(step, 0)))
        seen[step] = seen.get(step, 0) + 1
    out = []
    for j in task.get("junctions") or []:
        src, dst = str(j.get("from", "")), str(j.get("to", ""))
        if "." not in src or "." not in dst:
            continue
        (s_tool, fld), (d_tool, param) = src.split(".", 1), dst.split(".", 1)
        if s_tool not in api or d_tool not in api:
            continue
        ups = [n for n, a in enumerate(actions) if a["tool"] == s_tool]
        for d, a in enumerate(actions):
            if a["tool"] != d_tool or param not in (a.get("args") or {}) or not any(u < d for u in ups):
                continue
            held = [r.get(fld) for u in ups if u < d for r in getattr(results.get(at[u]), "records", None) or []]
            if a["args"][param] not in held:
                out.append(f"step {a['step']} {d_tool}: {param}={a['args'][param]!r} is not {s_tool}.{fld} upstream")
    return out
