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
  uses both source types cannot have one and gets no policy. The forbidden source must be one that could serve
  the task (a document headed by a name it reaches; APIs that may compute the passage's fact), so that an agent
  might break the policy; a vacuous ban gives no policy (blind read s12 pol: 7 of 10 tested nothing).
- ``none``: no policy.

Both categories also come scoped to API *platforms* (``scope: "platform"``, VAKRA's policies that forbid one
source while others stay permitted; blind read s11: every refusal banned all APIs, so refusing was right by
construction, and every no_effect policy banned a document search the task never needed):

- a platform refusal (API-only tasks) forbids the API platforms the golden path uses while another API platform
  of the domain stays permitted (and offered) but cannot answer: no permitted tool outputs the records the
  answer reads (`permitted_may_answer`: a tool whose output fields cover a last-step golden tool's own fields,
  those not sent to it, may stand in for it); the documents are forbidden too when one may state the answer
  (`documents_may_answer`);
- a platform no_effect policy forbids an API platform of the domain that the golden path does not use and that
  could serve the task (`platform_serves`: an alternative path calls it, first, or one of its read tools stands in
  for a golden hop, or, on a multi-source task, it can compute the passage's fact: the lexicon's `derived_by`), its
  tools offered, so the agent can break it while the permitted path still answers;
- a multi-source refusal (`passage_refusal`: API+RAG and RAG-only tasks whose answer is a passage's number) forbids the
  documents and every API platform the passage lexicon says can compute that number (`derived_by`: the store's
  invoices give an album's sales), while another API platform stays permitted: no permitted tool can produce the fact.
  A derivable fact whose platforms the lexicon does not name gets no refusal (an API could answer).

Which scope a drawn category gets: the platform scope when it applies, else the whole source type. A stable
draw (a hash of `retrieval.policy_seed` and the task's trajectory id, `draw_key`: rewording a question keeps its
policy) decides the category; `retrieval.policy_min_per_language`
then tops up each language to a minimum per category from the tasks that drew none (a second hash orders them),
so both languages carry refusals and no_effect tasks however few tasks a run publishes.

The value (`Task.policy`)::

    {"category", "scope": "source" | "platform", "text", "forbidden_sources": ["api" | "retrieval"],
     "forbidden_platforms": [platform], "expected_answer": str | None, "template": "policy/forbid.<lang>"}

Adherence (stage 3) is independent of the answer: every predicted call is tagged with its source type
(the ToolSpec's source kind: ``retrieval`` for a `search_<collection>` tool, ``api`` for OpenAPI and MCP
tools) and its platform; a call of a forbidden type or of a forbidden platform is a violation.
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


def draw_key(task: Mapping[str, Any]) -> str:
    """What a task's policy draw hashes: its trajectory (`lineage.trajectory_id`: the golden path), else its id. The
    id hashes the question's text too, so rewording a question would redraw its policy (blind read s11)."""
    lineage = task.get("lineage")
    tid = lineage.get("trajectory_id") if isinstance(lineage, Mapping) else None
    return str(tid or task.get("id"))


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
    *,
    scoped: tuple[Sequence[str], Sequence[str]] | None = None,
    catalog: "Catalog | None" = None,
) -> dict[str, Any] | None:
    """The policy value of `category` for the task (None for `none`). `scoped`: (source types, API platforms) of a
    platform-scoped policy (`platform_refusal`, `platform_no_effect`); `catalog` names each platform's tools."""
    if category not in CATEGORIES:
        raise PolicyError(f"task {task.get('id')}: unknown policy category {category!r} (one of {CATEGORIES})")
    if scoped is not None and category != "none":
        forbidden, platforms = list(scoped[0]), sorted(scoped[1])
    else:
        found = forbidden_for(task, category)
        if found is None:
            raise PolicyError(f"task {task.get('id')}: a {category} policy cannot apply to its golden path")
        forbidden, platforms = found, []
    if category == "none":
        return None
    lang = task.get("language") if task.get("language") in ("en", "ko") else "en"
    available = list(task.get("available_tools") or [])
    text = prompts.render(
        FORBID_TEMPLATE.format(lang=lang),
        sources=forbidden,
        apis=_platforms(task, "api", available, api_platforms=api_platforms) if "api" in forbidden else [],
        collections=_platforms(task, "retrieval", available, search_tools) if "retrieval" in forbidden else [],
        platforms=[{"name": p, "tools": platform_tools(p, catalog)} for p in platforms],
        topic=topic,
    )
    expected = prompts.render(UNANSWERABLE_TEMPLATE.format(lang=lang)) if category == "changes_answer" else None
    return {
        "category": category,
        "scope": "platform" if platforms else "source",
        "text": " ".join(text.split()),
        "forbidden_sources": forbidden,
        "forbidden_platforms": platforms,
        "expected_answer": expected,
        "template": FORBID_TEMPLATE.format(lang=lang),
    }


def platform_tools(platform: str, catalog: "Catalog | None") -> list[str]:
    """The tools a ban of `platform` names: every tool of the platform in the catalog (its key tool and write tools
    too), so one platform's ban reads the same in every task (blind read s12 pol: the chinook-store ban listed
    get_chinook_store_key and create_playlist in one task and not in five others); none without a catalog."""
    return sorted(n for n, c in (catalog or {}).items() if c.get("platform") == platform)


# --------------------------------------------------------------------------- platform-scoped policies

#: tool name → {"platform", "kind": "api" | "retrieval", "fields": output field names, "params": input names, "key"}
Catalog = Mapping[str, Mapping[str, Any]]


def tool_catalog(inventory: Mapping[str, Any] | None) -> dict[str, dict[str, Any]]:
    """The catalog of one domain's tool_inventory value (what platform-scoped policies read)."""
    out: dict[str, dict[str, Any]] = {}
    for t in (inventory or {}).get("tools") or []:
        props = (t.get("input_schema") or {}).get("properties") or {}
        g = t.get("generic_params") or {}
        generic = {g.get("key"), g.get("page"), g.get("page_size"), *(g.get("format") or [])}
        out[str(t.get("name"))] = {
            "semantic": set(props) - generic,  # what a call is about (keys, paging and format aside)
            "required": set((t.get("input_schema") or {}).get("required") or []) - generic,
            "platform": str(t.get("platform")),
            "kind": "retrieval" if (t.get("source") or {}).get("kind") == "retrieval" else "api",
            "fields": set(t.get("output_fields") or {}),
            "params": set(props),
            "key": bool(t.get("key_acquisition")),
            "state": bool(t.get("state_changing")) or "state_hash" in (t.get("output_fields") or {}),
        }
    return out


def _api_platforms(actions: Iterable[Mapping[str, Any]]) -> set[str]:
    return {str(a["platform"]) for a in actions if source_type(a) == "api" and a.get("platform")}


def _alternatives(task: Mapping[str, Any]) -> list[list[Mapping[str, Any]]]:
    return [list(p.get("actions") or []) for p in task.get("alternative_paths") or []]


def _domain_apis(catalog: Catalog) -> set[str]:
    return {str(c["platform"]) for c in catalog.values() if c["kind"] == "api"}


def _covers(own: set[str], fields: Iterable[str]) -> bool:
    """Whether a tool's output fields hold most of another tool's own fields (more than half: list_admin_sigungu
    holds 3 of list_census_sigungu's 4, its English name aside; list_census_sigungu holds 2 of list_admin_emd's 4,
    the 시·도 and 시군구 names every 읍면동 record repeats, but not the 읍면동's code and name)."""
    return 2 * len(own & set(fields)) > len(own)


def permitted_may_answer(task: Mapping[str, Any], banned: Iterable[str], catalog: Catalog) -> str | None:
    """How permitted API tools (of platforms not in `banned`) may give what the answer reads, or None when they
    cannot. The answer reads the golden path's last step; a permitted tool stands in for one of its calls when its
    output fields hold most of the golden tool's own fields (those it outputs but is not sent: `_covers`):
    list_census_sigungu for list_admin_sigungu (sigunguCd, sigunguNm), while nothing outside krgc-admin outputs a
    읍면동's emdCd, so 'the 법정동 of 종로구' has no permitted path. Earlier steps are not judged: a permitted tool
    may reach the same place by other fields (census's search_census_district finds 청운동's 시·도 by its admCd), so
    only what the answer reads decides. Every call of the last step needs a stand-in (a compare needs both arms);
    and a permitted tool that takes a parameter a last-step call is sent (by name) may be asked about the same entity;
    a golden tool the catalog does not know, or whose records have no field of their own, counts as replaceable."""
    banned = set(banned)
    permitted = sorted(
        (n, c) for n, c in catalog.items() if c["kind"] == "api" and not c["key"] and c["platform"] not in banned
    )
    golden = [a for a in task.get("golden_actions") or [] if not (catalog.get(str(a.get("tool"))) or {}).get("key")]
    if not golden:
        return "no golden call but keys"
    last = max(int(a.get("step") or 0) for a in golden)
    # a permitted tool sent what a last-step call is sent (a carrier, a tail number) may be asked about the same
    # entity: flight-ops' list_flights(carrier) counts what airline-registry's get_airline(carrier) states
    sent = {
        p
        for a in golden
        if int(a.get("step") or 0) == last
        for p in (a.get("args") or {})
        if p in (catalog.get(str(a.get("tool"))) or {}).get("semantic", set())
    }
    for n, u in permitted:
        if shared := sent & set(u.get("semantic") or ()):
            return f"{n} takes {sorted(shared)[0]} too"
    stand_ins: list[str] = []
    for a in golden:
        if int(a.get("step") or 0) != last:
            continue
        c = catalog.get(str(a.get("tool")))
        if source_type(a) != "api" or str(a.get("platform")) not in banned:
            stand_ins.append(f"{a.get('tool')}: permitted itself")
            continue
        own = set(c["fields"]) - set(c["params"]) if c is not None else set()
        if c is None or not own:
            stand_ins.append(f"{a.get('tool')}: unknown")
            continue
        found = next((n for n, u in permitted if _covers(own, u["fields"])), None)
        if found is None:
            return None
        stand_ins.append(f"{a.get('tool')}: {found}")
    return ", ".join(dict.fromkeys(stand_ins))


def platform_refusal(
    task: Mapping[str, Any], catalog: Catalog, chunks: Sequence[Mapping[str, Any]] = ()
) -> tuple[list[str], list[str]] | None:
    """(source types, platforms) of a refusal that forbids the API platforms the golden path uses while another API
    platform of the domain stays permitted but cannot answer (`permitted_may_answer`), or None. Every other
    sufficient path must use a forbidden platform too; the documents are forbidden as well when one may state
    the answer (`documents_may_answer`), so the refusal is right whatever the permitted tools return."""
    golden = task.get("golden_actions") or []
    if any(source_type(a) == "retrieval" for a in golden):
        # a permitted API may stand in for the passage hop (a bulletin's population is also a census statistic): only
        # where the lexicon names every platform that can compute the passage's fact are those banned with the documents
        return passage_refusal(task, catalog)
    banned = _api_platforms(golden)
    if not banned or any(not (_api_platforms(p) & banned) for p in _alternatives(task)):
        return None
    if not (_domain_apis(catalog) - banned) or permitted_may_answer(task, banned, catalog) is not None:
        return None
    has_docs = any(c["kind"] == "retrieval" for c in catalog.values())
    docs = has_docs and documents_may_answer(task, chunks) is not None
    return (["retrieval"] if docs else []), sorted(banned)


def derived_by(task: Mapping[str, Any]) -> list[str]:
    """The API platforms that can compute the passage fact a multi-source task asks or binds (the passage lexicon's
    `derived_by`, kept in the answer spec at synthesis); [] when not derivable or not known."""
    spec = task.get("answer_spec") or {}
    return sorted({str(p) for p in spec.get("derived_by") or []}) if spec.get("apis_may_answer") else []


def passage_refusal(task: Mapping[str, Any], catalog: Catalog) -> tuple[list[str], list[str]] | None:
    """(["retrieval"], platforms) of a refusal for a task whose answer is a passage's number (API+RAG `passage_value`,
    RAG-only): the documents forbidden, and with them every API platform that can compute that number
    (`derived_by`), while another API platform of the domain stays permitted (and offered): no permitted tool can
    produce the fact ('do not use the documents or chinook-store' on an album's sales). None when the fact is not
    derivable (the whole-source refusal applies), when the lexicon does not say which platforms compute it, when one
    of them is not a platform of the domain's catalog, when no platform would stay permitted, or when another
    sufficient path uses neither the documents nor a banned platform. A task whose answer is an API field after a
    passage hop (RAG-API) gets none: a permitted API may reach that record by another road."""
    spec = task.get("answer_spec") or {}
    if spec.get("kind") != "passage_value" or not spec.get("apis_may_answer"):
        return None
    banned = set(derived_by(task))
    apis = _domain_apis(catalog)
    if not banned or not banned <= apis or not (apis - banned):
        return None
    for p in _alternatives(task):
        if not any(source_type(a) == "retrieval" for a in p) and not (_api_platforms(p) & banned):
            return None
    return ["retrieval"], sorted(banned)


def platform_serves(task: Mapping[str, Any], platform: str, catalog: Catalog) -> str | None:
    """Why a read tool of API `platform` could serve (part of) the task, so that a plausible agent might call it, or
    None (VAKRA's no-effect policy bans a source that could serve the question while a permitted one still answers;
    blind read s12 pol: 7 of 10 no_effect bans named a platform the question would never touch, "do not use the store
    API" on an albums-by-artist question). Either an alternative sufficient path uses the platform, or one of its
    read tools stands in for a golden API call (any hop): its output fields hold most of that call's own fields
    (`_covers`) and it can be called with what the path knows there (its required parameters are among those the
    golden call is sent or earlier golden calls output: airport_coordinates(iata) holds search_airports' fields but
    cannot turn 'LaGuardia' into a code)."""
    for p in _alternatives(task):
        # a key call alone is no use of the platform (an 'original' path that fetched the store's key and never
        # called the store: blind read s12 pol #3, #8)
        if platform in _api_platforms(a for a in p if not (catalog.get(str(a.get("tool"))) or {}).get("key")):
            return f"an alternative path uses {platform}"
    if platform in derived_by(task) and any(source_type(a) == "retrieval" for a in task.get("golden_actions") or []):
        # a multi-source task: the platform can compute the passage's fact (the store's invoices give an album's
        # sales), so an agent might reach for it instead of the documents
        return f"{platform} may compute the passage's fact"
    tools = sorted(
        (n, c)
        for n, c in catalog.items()
        if c["platform"] == platform and c["kind"] == "api" and not c["key"] and not c.get("state")
    )
    golden = [
        a
        for a in task.get("golden_actions") or []
        if source_type(a) == "api" and not (catalog.get(str(a.get("tool"))) or {}).get("key")
    ]
    known: set[str] = set()
    for step in sorted({int(a.get("step") or 0) for a in golden}):
        here = [a for a in golden if int(a.get("step") or 0) == step]
        for a in here:
            c = catalog.get(str(a.get("tool")))
            if c is None:
                continue
            own = set(c["fields"]) - set(c["params"])
            have = known | {str(k) for k in (a.get("args") or {})}
            for n, u in tools:
                if own and _covers(own, u["fields"]) and set(u.get("required") or ()) <= have:
                    return f"{n} stands in for {a.get('tool')}"
        known |= {f for a in here for f in (catalog.get(str(a.get("tool"))) or {}).get("fields", set())}
    return None


def platform_no_effect(task: Mapping[str, Any], catalog: Catalog) -> tuple[list[str], list[str]] | None:
    """(source types, platforms) of a no_effect policy that forbids one API platform of the domain the golden path
    does not use, or None. Only a platform that could serve the task (`platform_serves`) is banned: one an
    alternative path uses first (the ban removes a real way to the answer), then one whose tools stand in for a golden
    call (list_census_sigungu beside list_admin_sigungu: the agent must pick the permitted source); a hash of the
    task's trajectory and the platform orders ties. A platform no tool of which could serve the task makes a vacuous
    ban (nothing to break): None, and the caller falls back to the documents when one is about the task, else to
    no policy."""
    used = _api_platforms(task.get("golden_actions") or [])
    why = {p: platform_serves(task, p, catalog) for p in sorted(_domain_apis(catalog) - used)}
    serving = [p for p, w in why.items() if w is not None]
    if not serving:
        return None
    tid = draw_key(task)
    best = min(serving, key=lambda p: (not str(why[p]).startswith("an alternative"), _draw(f"{tid}:{p}", 0)))
    return [], [best]


def no_effect_tests(
    task: Mapping[str, Any],
    pol: Mapping[str, Any] | None,
    catalog: Catalog | None,
    chunks: Sequence[Mapping[str, Any]] = (),
) -> str | None:
    """What a no_effect policy `pol` tests on the task as judged (before `restrict` drops the paths it forbids): why an
    agent might break it (a banned platform that could serve the task: `platform_serves`; banned documents, one
    headed by a name the task reaches: `documents_about`; banned APIs that may compute the passage's fact:
    `apis_may_answer`), or None when the ban is vacuous (the PolTest column of the blind policy reads)."""
    if not isinstance(pol, Mapping) or pol.get("category") != "no_effect":
        return None
    for p in pol.get("forbidden_platforms") or []:
        if catalog and (why := platform_serves(task, str(p), catalog)) is not None:
            return why
    sources = set(pol.get("forbidden_sources") or [])
    if "retrieval" in sources and (cid := documents_about(task, chunks)) is not None:
        return f"document {cid} is about the task"
    if "api" in sources and apis_may_answer(task):
        return "the APIs may compute the passage's fact"
    return None


def offer(task: Mapping[str, Any], catalog: Catalog) -> dict[str, Any]:
    """The task offering every read tool of its domain and the key tools they need (state-changing tools aside): a
    platform-scoped policy is one the agent can break (the forbidden platform's tools are offered, with its key) and
    that leaves a permitted tool to try (a permitted platform's read tools are of no use without its key tool: blind
    read s12 pol, a refusal offered the catalogue's tools but not get_chinook_catalog_key)."""
    tools = {n for n, c in catalog.items() if not c.get("state")}  # no write tool on a read task
    plats = {str(catalog[n]["platform"]) for n in tools}
    return {
        **task,
        "available_tools": sorted({*(task.get("available_tools") or []), *tools}),
        "platforms": sorted({*(task.get("platforms") or []), *plats}),
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
    if isinstance(pol, Mapping) and pol.get("category") == "no_effect" and task.get("alternative_paths"):
        # another sufficient path through the forbidden source is no way to the answer under the policy
        kept_paths = [p for p in task["alternative_paths"] if not _forbidden_actions(pol, p.get("actions") or [])]
        return {**task, "alternative_paths": kept_paths}
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
    if not isinstance(pol, Mapping):
        return []
    paths = [task.get("golden_actions") or []] + [p.get("actions") or [] for p in task.get("alternative_paths") or []]
    return [f"{a.get('platform')}.{a.get('tool')}" for p in paths for a in _forbidden_actions(pol, p)]


def _forbidden_actions(pol: Mapping[str, Any], actions: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The actions of a source type, or of an API platform, the policy forbids."""
    types = set(pol.get("forbidden_sources") or [])
    platforms = set(pol.get("forbidden_platforms") or [])
    return [
        a
        for a in actions
        if source_type(a) in types or (source_type(a) == "api" and str(a.get("platform")) in platforms)
    ]


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
    pats = _name_patterns(task)
    if not pats:
        return None
    for c in chunks:
        low = str(c.get("text") or "").lower()
        if any(p.search(low) for p in pats):
            return str(c.get("id"))
    return None


def documents_about(task: Mapping[str, Any], chunks: Sequence[Mapping[str, Any]]) -> str | None:
    """The id of a corpus chunk whose heading (its first line) names something the task names (what its calls send,
    its answer, the names the question states), or None: a document an agent asked the question might plausibly
    search, so a no_effect ban of the documents tests something. Stricter than `documents_may_answer` (any mention
    anywhere, which keeps refusals safe): 'most units: Germany' in an album's note is no document about Germany's
    customers, and a bulletin on 서울특별시 that mentions its 중구 is none about 부산광역시 중구."""
    pats = _name_patterns(task)
    for c in chunks:
        head = str(c.get("text") or "").strip().split("\n", 1)[0][:200].lower()
        if pats and any(p.search(head) for p in pats):
            return str(c.get("id"))
    return None


def _name_patterns(task: Mapping[str, Any]) -> list[re.Pattern[str]]:
    """Patterns of the names a task reaches: string arguments its API calls send, its answer, the question's names."""
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
    return [
        re.compile(rf"(?<![\w]){re.escape(n)}" + ("" if _HANGUL.search(n[-1:]) else r"(?![\w])"))
        for n in names
        if len(n) >= 3 or _HANGUL.search(n)
    ]


def apis_may_answer(task: Mapping[str, Any]) -> bool:
    """Whether the APIs alone may answer a task whose golden path searches documents: the passage fact it asks (or
    the passage name it binds) is one the reviewed passage lexicon marks `derivable` (the corpus is rendered from data
    the APIs serve: album sales from the store's invoice lines, a bulletin's daily mean from the hourly weather). A
    changes_answer policy forbidding the documents would then publish a wrong refusal (blind read s9: 'on how many
    invoices were AC/DC tracks sold' was refused while list_invoice_lines could count them)."""
    return bool((task.get("answer_spec") or {}).get("apis_may_answer"))


def _source_policy_applies(
    task: Mapping[str, Any], category: str, chunks: Sequence[Mapping[str, Any]]
) -> list[str] | None:
    """The source types a whole-source policy of `category` forbids, or None when it cannot apply (forbidding the
    APIs, when a document of the domain's corpus may state the answer; forbidding the documents, when the APIs may
    compute what the passage states: `apis_may_answer`). A no_effect policy applies only where the source it forbids
    could serve the task, so that an agent might break it (VAKRA's no-effect policy; blind read s12 pol): the
    documents when one is about something the task names, the APIs when they may compute the passage's fact."""
    forbidden = forbidden_for(task, category)
    if forbidden is None or (
        category == "changes_answer"
        and (
            (forbidden == ["api"] and documents_may_answer(task, chunks) is not None)
            or (forbidden == ["retrieval"] and apis_may_answer(task))
        )
    ):
        return None
    if category == "no_effect" and (
        (forbidden == ["retrieval"] and documents_about(task, chunks) is None)
        or (forbidden == ["api"] and not apis_may_answer(task))
    ):
        return None  # a vacuous ban: nothing the agent would reach for
    return forbidden


def options(
    task: Mapping[str, Any],
    category: str,
    catalog: Catalog | None = None,
    chunks: Sequence[Mapping[str, Any]] = (),
) -> list[tuple[list[str], list[str]]]:
    """The (source types, API platforms) a policy of `category` may forbid for the task, the platform scope first
    (it tests more: a permitted source stays), then the whole source type; [] when none applies."""
    if category == "none":
        return []
    out: list[tuple[list[str], list[str]]] = []
    if catalog:
        scoped = (
            platform_refusal(task, catalog, chunks)
            if category == "changes_answer"
            else platform_no_effect(task, catalog)
        )
        if scoped is not None:
            out.append(scoped)
    whole = _source_policy_applies(task, category, chunks)
    if whole is not None:
        out.append((whole, []))
    return out


def assign(
    task: Mapping[str, Any],
    settings: RetrievalConfig,
    topic: str,
    search_tools: Sequence[str] | None = None,
    chunks: Sequence[Mapping[str, Any]] = (),
    api_platforms: Sequence[str] | None = None,
    catalog: Catalog | None = None,
    category: str | None = None,
) -> dict[str, Any] | None:
    """The task's policy: the drawn category (or `category`), or `none` when it cannot apply (`options`)."""
    return _assigned(task, settings, topic, search_tools, chunks, api_platforms, catalog, category)[1]


def _assigned(
    task: Mapping[str, Any],
    settings: RetrievalConfig,
    topic: str,
    search_tools: Sequence[str] | None,
    chunks: Sequence[Mapping[str, Any]],
    api_platforms: Sequence[str] | None,
    catalog: Catalog | None,
    category: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """(the task as published under its policy's tools, the policy) for the drawn category or `category`."""
    category = category or draw_category(draw_key(task), settings)
    opts = options(task, category, catalog, chunks)
    if not opts:
        return dict(task), None
    sources, platforms = opts[0]
    t = dict(task)
    if platforms and catalog:
        t = offer(t, catalog)
    elif category == "no_effect" and "retrieval" in sources and search_tools:
        # a policy forbidding a tool the task does not offer tells the agent nothing and reads as a mistake (blind
        # read s9: 'do not use document search' beside an API-only tool list): the domain's search tools are
        # offered, and named, so the policy is one the agent can break
        t["available_tools"] = sorted({*(t.get("available_tools") or []), *search_tools})
    if not platforms:
        return t, build_policy(t, category, topic, search_tools, api_platforms)
    return t, build_policy(
        t, category, topic, search_tools, api_platforms, scoped=(sources, platforms), catalog=catalog
    )


def assign_policies(
    tasks: Sequence[Mapping[str, Any]],
    cfg: ProjectConfig,
    corpora: Mapping[str, Mapping[str, Any]] | None = None,
    inventories: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Every task with its `policy` (tasks that already carry one keep it) and the distribution:
    {"by_category": {category: n}, "by_scope": {scope: n}, "by_language": {lang: {category: n}},
    "drawn_but_ineligible": n, "no_effect_vacuous": n (drew no_effect, but only a vacuous ban was left: none), "topped_up": {lang: {category: n}}, "by_hop_type": {hop: {category: n}}}.
    `inventories` (tool_inventory per domain) enable the platform-scoped policies."""
    topics: dict[str, str] = {}
    ineligible = 0
    vacuous: list[str] = []  # drew no_effect, but no source the task leaves unused could serve it: no policy
    placed: list[tuple[dict[str, Any], dict[str, Any] | None, bool]] = []  # (task, policy, kept as it came)

    def context(d: str) -> tuple[list[str] | None, list[str] | None, list[Mapping[str, Any]], Catalog | None]:
        dom = cfg.domain(d) if d in cfg.domain_names else None
        coll = [f"search_{s.collection}" for s in (dom.sources if dom else []) if s.kind == "retrieval"]
        apis = [str(s.platform) for s in (dom.sources if dom else []) if s.kind != "retrieval" and s.platform]
        chunks = ((corpora or {}).get(d) or {}).get("chunks") or []
        inv = (inventories or {}).get(d)
        return (coll if dom else None), (apis or None), chunks, (tool_catalog(inv) if inv else None)

    contexts: dict[str, Any] = {}
    for t in tasks:
        d = str(t.get("domain"))
        if d not in topics:
            desc = cfg.domain(d).description if d in cfg.domain_names else ""
            topics[d] = topic_of(desc, d)
            contexts[d] = context(d)
        if "policy" in t and t["policy"] is not None:
            placed.append((dict(t), t["policy"], True))
            continue
        coll, apis, chunks, catalog = contexts[d]
        drawn = draw_category(draw_key(t), cfg.retrieval)
        t2, pol = _assigned(t, cfg.retrieval, topics[d], coll, chunks, apis, catalog)
        ineligible += int(drawn != "none" and pol is None)
        if drawn == "no_effect" and pol is None:
            vacuous.append(str(t.get("id")))
        placed.append((t2 if pol is not None else dict(t), pol, False))
    # top up: each language gets at least `policy_min_per_language[category]` tasks of each category, from the
    # tasks that drew none (or could not take the drawn one), in the order of a second hash of their ids; a top-up
    # never makes policies carried by more than half a language's tasks (3 tasks of a small domain would all
    # become refusals under a minimum of 3)
    topped: dict[str, Counter[str]] = {}
    minimum = dict(cfg.retrieval.policy_min_per_language or {})

    def room(lang: str) -> int:
        of_lang = [p for t, p, _ in placed if str(t.get("language")) == lang]
        return len(of_lang) // 2 - sum(p is not None for p in of_lang)

    for cat, need in sorted(minimum.items()):
        for lang in sorted({str(t.get("language")) for t, _, _ in placed}):
            have = sum(1 for t, p, _ in placed if str(t.get("language")) == lang and category_of({"policy": p}) == cat)
            order = sorted(
                (
                    i
                    for i, (t, p, kept) in enumerate(placed)
                    if not kept and p is None and str(t.get("language")) == lang
                ),
                key=lambda i: _draw(draw_key(placed[i][0]), cfg.retrieval.policy_seed + 1),
            )
            for i in order:
                if have >= need or room(lang) <= 0:
                    break
                t = placed[i][0]
                d = str(t.get("domain"))
                coll, apis, chunks, catalog = contexts[d]
                t2, pol = _assigned(t, cfg.retrieval, topics[d], coll, chunks, apis, catalog, category=cat)
                if pol is not None:
                    placed[i] = (t2, pol, False)
                    have += 1
                    topped.setdefault(lang, Counter())[cat] += 1
    out: list[dict[str, Any]] = []
    counts: Counter[str] = Counter()
    scopes: Counter[str] = Counter()
    by_lang: dict[str, Counter[str]] = {}
    by_hop: dict[str, Counter[str]] = {}
    for t, pol, _ in placed:
        cat = category_of({"policy": pol})
        counts[cat] += 1
        if isinstance(pol, Mapping):
            scopes[str(pol.get("scope") or "source")] += 1
        by_lang.setdefault(str(t.get("language")), Counter())[cat] += 1
        by_hop.setdefault(hop_type(t), Counter())[cat] += 1
        out.append(restrict({**t, "policy": pol}))
    stats = {
        "by_category": {c: counts.get(c, 0) for c in CATEGORIES},
        "by_scope": dict(sorted(scopes.items())),
        "by_language": {lg: {c: n.get(c, 0) for c in CATEGORIES} for lg, n in sorted(by_lang.items())},
        "drawn_but_ineligible": ineligible,
        "no_effect_vacuous": len(vacuous),
        "topped_up": {lg: dict(sorted(n.items())) for lg, n in sorted(topped.items())},
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
    platform_of: Callable[[str], str | None] | None = None,
) -> dict[str, Any]:
    """Stage 3 of the evaluation: did the trace consult a forbidden source? Deterministic, independent of
    the answer. `calls` are the agent's calls ({"tool", "status"}: every attempted call counts, a call that
    was sent consulted its source even when it failed); `source_of(tool)` → "api" | "retrieval" | None
    (an unknown tool is no source); `platform_of(tool)` → its platform (a platform-scoped policy: a call to a
    forbidden platform is a violation even when its answer is right). Returns {"applies", "passed",
    "violations": [{"index", "tool", "source"}], "sources": {type: calls}}."""
    forbidden = set((policy or {}).get("forbidden_sources") or [])
    platforms = set((policy or {}).get("forbidden_platforms") or [])
    if platforms and platform_of is None:
        raise PolicyError("a platform-scoped policy needs the platform of each call (platform_of)")
    tagged = [(i, str(c.get("tool")), source_of(str(c.get("tool")))) for i, c in enumerate(calls)]
    sources = Counter(st for _, _, st in tagged if st)

    def banned(tool: str, st: str | None) -> bool:
        return st in forbidden or (st == "api" and platform_of is not None and platform_of(tool) in platforms)

    violations = [
        {"index": i, "tool": tool, "source": st}
        for (i, tool, st), c in zip(tagged, calls, strict=True)
        if banned(tool, st) and c.get("status", "executed") == "executed"
    ]
    return {
        "applies": bool(forbidden or platforms),
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
    inventories: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
    """The judged_queries values with a policy on every kept task (what dataset_splits splits), and the
    distribution (`assign_policies`). Called by the dataset_splits asset before the split build: factory.splits
    stays free of factory.retrieval (which reads the splits)."""
    kept = [t for v in judged.values() for t in (v.get("kept") or [])]
    assigned, stats = assign_policies(kept, cfg, corpora, inventories)
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
