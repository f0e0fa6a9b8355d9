"""Tool-use policies (VAKRA §3, Table 3; issue 17 item 5): a natural-language policy per task that
forbids a source type, and the deterministic adherence check of evaluation stage 3.

Every task gets one of three categories, drawn deterministically from its id
(`retrieval.policy_shares`, `retrieval.policy_seed`):

- ``changes_answer``: the policy forbids a source type every sufficient path of the task uses
  (retrieval when the golden path searches documents, as in VAKRA's "do not use documents to answer
  questions related to movies"; the APIs otherwise), so no permitted tool can answer: the expected
  answer becomes the fixed sentence of `prompts/policy/unanswerable.<lang>`. Decontamination is what
  makes this true: rule (a) keeps API answers out of the index, rule (b) drops RAG tasks the APIs answer.
- ``no_effect``: the policy forbids a source type the golden path does not use (retrieval for an
  API-only task, the APIs for a RAG-only task); the answer is unchanged. A task whose golden path
  uses both source types cannot have one and gets no policy.
- ``none``: no policy.

The value (`Task.policy`)::

    {"category", "text", "forbidden_sources": ["api" | "retrieval"], "expected_answer": str | None,
     "template": "policy/forbid.<lang>"}

Adherence (stage 3) is independent of the answer: every predicted call is tagged with its source type
(the ToolSpec's source kind: ``retrieval`` for a `search_<collection>` tool, ``api`` for OpenAPI and MCP
tools) and a call of a forbidden type is a violation.
"""

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from factory import prompts
from factory.config import ProjectConfig, RetrievalConfig

CATEGORIES = ("changes_answer", "no_effect", "none")
SOURCE_TYPES = ("api", "retrieval")
FORBID_TEMPLATE = "policy/forbid.{lang}"
UNANSWERABLE_TEMPLATE = "policy/unanswerable.{lang}"


class PolicyError(ValueError):
    """A policy that cannot be built or read (the message names the task and the problem)."""


def source_type(action: Mapping[str, Any]) -> str:
    """The source type of a golden action (ragtasks' `source_type`; rows without it are API calls)."""
    st = action.get("source_type") or "api"
    if st not in SOURCE_TYPES:
        raise PolicyError(f"golden action {action.get('tool')!r} has source_type {st!r}, not one of {SOURCE_TYPES}")
    return str(st)


def path_sources(actions: Iterable[Mapping[str, Any]]) -> set[str]:
    return {source_type(a) for a in actions}


def _draw(task_id: str, seed: int) -> float:
    h = hashlib.sha256(f"policy:{seed}:{task_id}".encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


def draw_category(task_id: str, settings: RetrievalConfig) -> str:
    """The category a task's id draws from the configured shares (before eligibility)."""
    u, acc = _draw(task_id, settings.policy_seed), 0.0
    for c in CATEGORIES:
        acc += settings.policy_shares.get(c, 0.0)
        if u < acc:
            return c
    return "none"


def topic_of(description: str, fallback: str) -> str:
    """What a domain's questions are about, for the policy sentence: the description's first sentence, without
    a dash or bracketed aside ("US domestic flights out of New York in 2013, airlines, aircraft and airports
    worldwide." kept whole: a policy about "flights" alone would not cover a question about airports), or the
    domain name."""
    head = re.split(r" - | \(|\. |\.$|;", (description or "").strip())[0].strip()
    if not head:
        return fallback
    return head if head[:2].isupper() or not head[:1].isupper() else head[0].lower() + head[1:]


def forbidden_for(task: Mapping[str, Any], category: str) -> list[str] | None:
    """The source types the policy of `category` forbids for the task, or None when the category cannot
    apply (changes_answer: a type every sufficient path uses; no_effect: a type the golden path avoids)."""
    golden = path_sources(task.get("golden_actions") or [])
    paths = [golden] + [path_sources(p.get("actions") or []) for p in task.get("alternative_paths") or []]
    if category == "changes_answer":
        for st in ("retrieval", "api"):  # VAKRA's example forbids documents first
            if all(st in p for p in paths):
                return [st]
        return None
    if category == "no_effect":
        unused = [st for st in ("retrieval", "api") if st not in golden]
        return unused[:1] if len(unused) == 1 else None
    return []


def _platforms(
    task: Mapping[str, Any],
    kind: str,
    available: Sequence[str],
    search_tools: Sequence[str] | None = None,
    api_platforms: Sequence[str] | None = None,
) -> list[str]:
    """The names the policy sentence gives the forbidden source: collections (search tools) or API platforms.
    `search_tools`: the domain's document search tools when known (an API tool may be called search_* too:
    search_census_district), else every available search_* tool."""
    actions = task.get("golden_actions") or []
    if kind == "retrieval":
        names = {a["tool"] for a in actions if source_type(a) == "retrieval"}
        names |= {t for t in available if (t in search_tools if search_tools is not None else t.startswith("search_"))}
    else:
        # every API platform of the domain when known: a policy naming only the golden path's platforms leaves the
        # others permitted, and one of them may answer (blind read s9: the store tools count what the catalogue did)
        names = {a["platform"] for a in actions if source_type(a) == "api"} | set(api_platforms or ())
    return sorted(names)


def build_policy(
    task: Mapping[str, Any],
    category: str,
    topic: str,
    search_tools: Sequence[str] | None = None,
    api_platforms: Sequence[str] | None = None,
) -> dict[str, Any] | None:
    """The policy value of `category` for the task (None for `none`)."""
    if category not in CATEGORIES:
        raise PolicyError(f"task {task.get('id')}: unknown policy category {category!r} (one of {CATEGORIES})")
    forbidden = forbidden_for(task, category)
    if forbidden is None:
        raise PolicyError(f"task {task.get('id')}: a {category} policy cannot apply to its golden path")
    if category == "none":
        return None
    lang = task.get("language") if task.get("language") in ("en", "ko") else "en"
    available = list(task.get("available_tools") or [])
    text = prompts.render(
        FORBID_TEMPLATE.format(lang=lang),
        sources=forbidden,
        apis=_platforms(task, "api", available, api_platforms=api_platforms) if "api" in forbidden else [],
        collections=_platforms(task, "retrieval", available, search_tools) if "retrieval" in forbidden else [],
        topic=topic,
    )
    expected = prompts.render(UNANSWERABLE_TEMPLATE.format(lang=lang)) if category == "changes_answer" else None
    return {
        "category": category,
        "text": " ".join(text.split()),
        "forbidden_sources": forbidden,
        "expected_answer": expected,
        "template": FORBID_TEMPLATE.format(lang=lang),
    }


_HANGUL = re.compile(r"[가-힣]")
_QUOTED = re.compile(r"'([^']{2,80})'|\"([^\"]{2,80})\"")
# capitalized words in a row ('Music Videos', 'Endeavor Air Inc.', 'the United States'), and codes ('JFK')
_PROPER = re.compile(r"\b[A-Z][\w&'-]*\.?(?:\s+(?:of|the)?\s*[A-Z][\w&'-]*\.?)*|\b[A-Z][A-Z0-9]{2,3}\b")
# a Korean place name: a word ending in an administrative suffix, the particle after it left off ('서울특별시와')
_KO_PLACE = re.compile(
    r"([가-힣]{1,12}?(?:특별자치시|특별자치도|특별시|광역시|시|도|군|구|읍|면|동))"
    r"(?:와|과|의|은|는|이|가|을|를|에|에서|로|으로|도)?(?![가-힣])"
)
# words with such an ending that name no place: the division words themselves, '인구', conditional verbs ('보면')
_KO_NOT_PLACE = re.compile(r"^(?:시군구|읍면동|시도|시군|인구|가구|지역구|어느 곳)$|(?:하|보|치|으|이|라|다|지|리)면$")
_QUESTION_WORDS = {"What", "Which", "How", "Who", "Where", "When", "Take", "Check", "Could", "Compared", "Between",
                   "In", "I", "I'm", "I'd", "Two", "Is", "Are", "Do", "Does", "The", "If", "Tell", "From", "On"}  # fmt: skip


def query_names(query: str) -> list[str]:
    """Names a question states that a document may be about, whatever the calls send (a code, an id): quoted titles,
    capitalized names ('Music Videos', 'Endeavor Air Inc.'), codes ('JFK'), Korean place names ('서울특별시', '중구').
    A question word or a sentence's first word is no name."""
    out = [a or b for a, b in _QUOTED.findall(query)]
    for sentence in re.split(r"(?<=[.?!:])\s+", query):
        for m in _PROPER.finditer(sentence):
            words = m.group(0).strip().split()
            while words and words[0] in _QUESTION_WORDS:
                words = words[1:]
            if words:
                out.append(" ".join(words).rstrip(".") if not words[-1].endswith("Inc.") else " ".join(words))
    out += [
        m.group(1) for m in _KO_PLACE.finditer(query) if len(m.group(1)) >= 2 and not _KO_NOT_PLACE.search(m.group(1))
    ]
    return [n for n in dict.fromkeys(out) if n]


def restrict(task: Mapping[str, Any]) -> dict[str, Any]:
    """The task as published under its policy. A changes_answer policy forbids a source every sufficient path uses,
    so a compliant agent makes none of those calls and says no permitted tool can answer: the golden path, the
    other paths and the COND counterfactual calls are empty, the answer is the policy's unanswerable sentence (what
    the exports and evaluation grade), and what the task is without the policy (those calls, the answer spec and
    the answer the forbidden tools give) is kept as lineage in `policy["unrestricted"]` (`records.unrestricted`
    reads it back: the audit re-derives that answer, conversations are built from it). Blind read s10: "all 4
    golden calls use the forbidden API". Any other task (and one already restricted) is returned as it is."""
    pol = task.get("policy")
    if not isinstance(pol, Mapping) or pol.get("category") != "changes_answer" or "unrestricted" in pol:
        return dict(task)
    from factory.records import UNRESTRICTED_FIELDS

    refusal = str(pol.get("expected_answer") or "")
    kept = {k: task[k] for k in UNRESTRICTED_FIELDS if k in task}
    return {
        **task,
        "golden_actions": [],
        "alternative_paths": [],
        "counterfactual_actions": [],
        "answer_spec": {"kind": "unanswerable", "calls": []},
        "answer": {"type": "string", "value": refusal, "text": refusal, "fields": []},
        "policy": {**pol, "unrestricted": kept},
    }


def forbidden_calls(task: Mapping[str, Any]) -> list[str]:
    """The golden calls (and calls of other sufficient paths) of a source type the task's policy forbids: none
    when the published task is sound (`restrict`)."""
    pol = task.get("policy")
    forbidden = set((pol or {}).get("forbidden_sources") or []) if isinstance(pol, Mapping) else set()
    if not forbidden:
        return []
    paths = [task.get("golden_actions") or []] + [p.get("actions") or [] for p in task.get("alternative_paths") or []]
    return [f"{a.get('platform')}.{a.get('tool')}" for p in paths for a in p if source_type(a) in forbidden]


def documents_may_answer(task: Mapping[str, Any], chunks: Sequence[Mapping[str, Any]]) -> str | None:
    """The id of a corpus chunk about something the task names, or None. A changes_answer policy that forbids the
    APIs claims the documents cannot answer; a document about an entity the question reaches (a name or title
    its API calls send, or its answer: an artist's note says 'holds 2 albums by Accept', an album's note gives
    its track count and playlists) may answer it, by a fact or by comparing two documents, so such a task gets
    no such policy. Deliberately loose: a false alarm only costs one policy draw, a miss publishes a wrong
    refusal (blind reads s9: 6 of 12 refusals were wrong while only the answer value was looked for). Names the question
    states count too (`query_names`): calls may send only codes or ids ('sidoCd 11' for 서울특별시, 'playlist_id 9' for
    Music Videos) while a bulletin or a note about the named entity answers (관할 시군구는 25곳; a note listing the
    playlists of its album)."""
    if not chunks:
        return None
    answer = (task.get("answer") or {}).get("value")
    values = [answer] if not isinstance(answer, list) else answer
    names = {
        str(v).strip().lower()
        for a in task.get("golden_actions") or []
        if source_type(a) == "api"
        for k, v in (a.get("args") or {}).items()
        if isinstance(v, str) and k not in ("api_key", "format")
    } | {str(v).strip().lower() for v in values if isinstance(v, str)}
    names |= {n.lower() for n in query_names(str(task.get("query") or ""))}
    # a Korean name may carry a particle ('서울특별시의'): only its start is bounded
    pats = [
        re.compile(rf"(?<![\w]){re.escape(n)}" + ("" if _HANGUL.search(n[-1:]) else r"(?![\w])"))
        for n in names
        if len(n) >= 3 or _HANGUL.search(n)
    ]
    if not pats:
        return None
    for c in chunks:
        low = str(c.get("text") or "").lower()
        if any(p.search(low) for p in pats):
            return str(c.get("id"))
    return None


def apis_may_answer(task: Mapping[str, Any]) -> bool:
    """Whether the APIs alone may answer a task whose golden path searches documents: the passage fact it asks (or
    the passage name it binds) is one the reviewed passage lexicon marks `derivable` (the corpus is rendered from data
    the APIs serve: album sales from the store's invoice lines, a bulletin's daily mean from the hourly weather). A
    changes_answer policy forbidding the documents would then publish a wrong refusal (blind read s9: 'on how many
    invoices were AC/DC tracks sold' was refused while list_invoice_lines could count them)."""
    return bool((task.get("answer_spec") or {}).get("apis_may_answer"))


def assign(
    task: Mapping[str, Any],
    settings: RetrievalConfig,
    topic: str,
    search_tools: Sequence[str] | None = None,
    chunks: Sequence[Mapping[str, Any]] = (),
    api_platforms: Sequence[str] | None = None,
) -> dict[str, Any] | None:
    """The task's policy: the drawn category, or `none` when the drawn one cannot apply to its golden path
    (or, forbidding the APIs, when a document of the domain's corpus may state the answer; forbidding the documents,
    when the APIs may compute what the passage states: `apis_may_answer`)."""
    category = draw_category(str(task.get("id")), settings)
    forbidden = forbidden_for(task, category)
    if forbidden is None or (
        category == "changes_answer"
        and (
            (forbidden == ["api"] and documents_may_answer(task, chunks) is not None)
            or (forbidden == ["retrieval"] and apis_may_answer(task))
        )
    ):
        category = "none"
    return build_policy(task, category, topic, search_tools, api_platforms)


def assign_policies(
    tasks: Sequence[Mapping[str, Any]],
    cfg: ProjectConfig,
    corpora: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every task with its `policy` (tasks that already carry one keep it) and the distribution:
    {"by_category": {category: n}, "drawn_but_ineligible": n, "by_hop_type": {hop: {category: n}}}."""
    out: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    by_hop: dict[str, Counter[str]] = {}
    ineligible = 0
    topics: dict[str, str] = {}
    for t in tasks:
        d = str(t.get("domain"))
        if d not in topics:
            desc = cfg.domain(d).description if d in cfg.domain_names else ""
            topics[d] = topic_of(desc, d)
        if "policy" in t and t["policy"] is not None:
            pol = t["policy"]
        else:
            drawn = draw_category(str(t.get("id")), cfg.retrieval)
            dom = cfg.domain(d) if d in cfg.domain_names else None
            coll = [f"search_{s.collection}" for s in (dom.sources if dom else []) if s.kind == "retrieval"]
            apis = [str(s.platform) for s in (dom.sources if dom else []) if s.kind != "retrieval" and s.platform]
            chunks = ((corpora or {}).get(d) or {}).get("chunks") or []
            pol = assign(t, cfg.retrieval, topics[d], coll if dom else None, chunks, apis or None)
            ineligible += int(drawn != "none" and pol is None)
            if pol is not None and pol["category"] == "no_effect" and "retrieval" in pol["forbidden_sources"] and coll:
                # a policy forbidding a tool the task does not offer tells the agent nothing and reads as a
                # mistake (blind read s9: 'do not use document search' beside an API-only tool list): the
                # domain's search tools are offered, and named, so the policy is one the agent can break
                t = {**t, "available_tools": sorted({*(t.get("available_tools") or []), *coll})}
                pol = build_policy(t, "no_effect", topics[d], coll, apis or None)
        cat = category_of({"policy": pol})
        counts[cat] += 1
        by_hop.setdefault(hop_type(t), Counter())[cat] += 1
        out.append(restrict({**t, "policy": pol}))
    stats = {
        "by_category": {c: counts.get(c, 0) for c in CATEGORIES},
        "drawn_but_ineligible": ineligible,
        "by_hop_type": {h: {c: n.get(c, 0) for c in CATEGORIES} for h, n in sorted(by_hop.items())},
    }
    return out, stats


def hop_type(task: Mapping[str, Any]) -> str:
    """The task's hop type (ragtasks' `hop_type`; None on older rows = "API")."""
    return str(task.get("hop_type") or "API")


def category_of(task: Mapping[str, Any]) -> str:
    pol = task.get("policy")
    return str(pol.get("category")) if isinstance(pol, Mapping) and pol.get("category") else "none"


def expected_answer(task: Mapping[str, Any]) -> str | None:
    """The fixed unanswerable sentence when the task's policy changes its answer, else None."""
    pol = task.get("policy")
    if isinstance(pol, Mapping) and pol.get("category") == "changes_answer":
        return str(pol.get("expected_answer") or prompts.render(UNANSWERABLE_TEMPLATE.format(lang="en")))
    return None


# --------------------------------------------------------------------------- stage 3: adherence


def adherence(
    policy: Mapping[str, Any] | None,
    calls: Sequence[Mapping[str, Any]],
    source_of: Callable[[str], str | None],
) -> dict[str, Any]:
    """Stage 3 of the evaluation: did the trace consult a forbidden source? Deterministic, independent of
    the answer. `calls` are the agent's calls ({"tool", "status"}: every attempted call counts, a call that
    was sent consulted its source even when it failed); `source_of(tool)` → "api" | "retrieval" | None
    (an unknown tool is no source). Returns {"applies", "passed", "violations": [{"index", "tool", "source"}],
    "sources": {type: calls}}."""
    forbidden = set((policy or {}).get("forbidden_sources") or [])
    tagged = [(i, str(c.get("tool")), source_of(str(c.get("tool")))) for i, c in enumerate(calls)]
    sources = Counter(st for _, _, st in tagged if st)
    violations = [
        {"index": i, "tool": tool, "source": st}
        for (i, tool, st), c in zip(tagged, calls, strict=True)
        if st in forbidden and c.get("status", "executed") == "executed"
    ]
    return {
        "applies": bool(forbidden),
        "passed": not violations,
        "violations": violations,
        "sources": dict(sorted(sources.items())),
    }


_REFUSAL = re.compile(
    r"no permitted tool|cannot (?:be )?answer|can't answer|can not answer|unable to answer|not (?:able|allowed|"
    r"permitted) to (?:answer|use)|policy (?:does not|doesn't) (?:allow|permit)|답할 수 없|답변할 수 없|"
    r"허용된 도구로는|알 수 없습니다|사용할 수 없",
    re.IGNORECASE,
)


def states_unanswerable(text: str | None) -> bool:
    """Whether a final answer says the permitted tools cannot answer (en/ko wordings)."""
    return bool(text and _REFUSAL.search(text))


# --------------------------------------------------------------------------- dataset_splits hooks


def with_policies(
    judged: Mapping[str, Mapping[str, Any]],
    cfg: ProjectConfig,
    corpora: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The judged_queries values with a policy on every kept task (what dataset_splits splits), and the
    distribution (`assign_policies`). Called by the dataset_splits asset before the split build: factory.splits
    stays free of factory.retrieval (which reads the splits)."""
    kept = [t for v in judged.values() for t in (v.get("kept") or [])]
    assigned, stats = assign_policies(kept, cfg, corpora)
    by_id = {str(t.get("id")): t for t in assigned}
    out = {d: {**v, "kept": [by_id.get(str(t.get("id")), t) for t in (v.get("kept") or [])]} for d, v in judged.items()}
    return out, stats


def distribution_metadata(tasks: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Hop-type and policy distribution of published tasks (dataset_splits metadata, issue 17 item 7)."""
    from factory.report import md_table

    hops = sorted({hop_type(t) for t in tasks})
    return {
        "policy_by_category": {c: sum(1 for t in tasks if category_of(t) == c) for c in CATEGORIES},
        "hop_types": {h: sum(1 for t in tasks if hop_type(t) == h) for h in hops},
        "hop_type_by_policy": md_table(
            [
                {
                    "hop_type": h,
                    **{c: sum(1 for t in tasks if hop_type(t) == h and category_of(t) == c) for c in CATEGORIES},
                }
                for h in hops
            ],  # fmt: skip
            ["hop_type", *CATEGORIES],
            limit=10,
        ),
    }
