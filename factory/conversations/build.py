"""The `conversations` asset's core: conversation tasks from the published tasks, audited with the golden agent
against the configured user simulator and the live tools (issue 19 items 1-4).

Every conversation task is played once by the `OracleAgent` against the simulator (the `user_simulator` role:
rules, or a model pinned to temperature 0) and the real tools (one executor session per episode, keys acquired
up front, the state hash read at the end). The oracle does exactly what the task requires, so any failure is a
simulator or task defect: such tasks are dropped with the reason, and the published tasks have goal_success 1
and sim_fault 0 under the oracle. The share caught is reported.
"""

import asyncio
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from factory.config import ProjectConfig
from factory.conversations.episode import (
    Agent,
    Caps,
    ModelSimulator,
    OracleAgent,
    Simulator,
    run_conversation,
    score_episode,
)
from factory.conversations.found import found_names, found_sentence, results_by_call, searched_subject
from factory.conversations.persona import fit_to_found, register_consistent
from factory.conversations.recovery import RECOVERABLE, chosen, probe_failures, recovery_variants
from factory.conversations.recovery import verified as recovery_verified
from factory.conversations.stateful import stateful_tasks
from factory.conversations.tasks import (
    CASE_KINDS,
    SEARCH_SEP,
    ConversationTaskError,
    about_catalogue,
    answer_values,
    capabilities,
    conversation_tasks,
    count_singles,
    lexicon_catalogue_tools,
    lexicon_noun_of,
    lexicon_param_entity,
    lexicon_tool_noun,
)
from factory.conversations.wording import plain_noun, skeleton
from factory.eval.harness import task_tools
from factory.io import dumps
from factory.llm.agent import ExecutorRunner, OfferedTool
from factory.llm.client import ModelClient
from factory.llm.simulator import simulator_pin
from factory.records import Task, unrestricted
from factory.report import md_table
from factory.tools.registry import ToolRegistry, ToolResolutionError, executor_factory
from factory.tools.retrieval import served_inventories

if TYPE_CHECKING:
    import pandas as pd


class LiveEnv:
    """The task's offered tools through one executor session; the state hash of the terminal-state platforms."""

    def __init__(self, ex: Any, offered: Sequence[OfferedTool], state_specs: Mapping[str, Any], max_chars: int):
        self.ex = ex
        self.offered = {t.name: t for t in offered}
        self.runner = ExecutorRunner(ex, max_chars)
        self.state_specs = state_specs

    async def call(self, name: str, args: dict[str, Any]) -> tuple[bool, str]:
        tool = self.offered.get(name)
        if tool is None:
            return False, f"unknown tool {name!r}; offered: {', '.join(sorted(self.offered))}"
        problems = tool.problems(args)
        if problems:
            return False, "invalid arguments: " + "; ".join(problems)
        obs = await self.runner(tool, args)
        return obs.ok, obs.content

    async def state(self) -> dict[str, str | None]:
        out: dict[str, str | None] = {}
        for platform, spec in self.state_specs.items():
            if spec is None:
                out[platform] = None
                continue
            r = await self.ex.call(spec, {})
            out[platform] = str(r.records[0].get("state_hash")) if r.ok and r.records else None
        return out


@dataclass(frozen=True)
class _ToolsView:
    """The fields of a Task that `task_tools` reads, taken from a conversation task."""

    id: str
    domain: str
    platforms: list[str]
    available_tools: list[str]
    system_state: dict[str, Any]
    expected_state_hash: dict[str, str]

    @classmethod
    def of(cls, conv: Mapping[str, Any]) -> "_ToolsView":
        return cls(
            id=conv["id"],
            domain=conv["domain"],
            platforms=list(conv["platforms"]),
            available_tools=list(conv["tools_subset"]),
            system_state=dict(conv["system_state"]),
            expected_state_hash=dict(conv["success_criteria"]["terminal_state"]),
        )


async def play(
    conv: Mapping[str, Any],
    registry: ToolRegistry,
    cfg: ProjectConfig,
    sim: Simulator,
    caps: Caps,
    agent: Agent | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(score, episode) of one conversation task played by `agent` (default: the golden `OracleAgent`) against
    the simulator and the live tools, in its own executor session."""
    tools = task_tools(registry, cast(Task, _ToolsView.of(conv)))
    async with executor_factory(cfg, tools.domains, registry)() as ex:
        for spec in tools.key_specs:  # keys are acquired before the first turn, as in evaluation
            await ex.call(spec, {})
        env = LiveEnv(ex, tools.offered, tools.state_specs, cfg.conversations.max_observation_chars)
        episode = await run_conversation(conv, agent or OracleAgent(), sim, env, caps)
        episode = ex.redact({**episode, "tools": [t.definition() for t in tools.offered]})
    return score_episode(conv, episode), episode


async def audit(
    convs: Sequence[Mapping[str, Any]],
    registry: ToolRegistry,
    cfg: ProjectConfig,
    sim: Simulator,
    caps: Caps,
    concurrency: int = 4,
) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    gate = asyncio.Semaphore(concurrency)

    async def one(c: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
        async with gate:
            return await play(c, registry, cfg, sim, caps)

    return list(await asyncio.gather(*(one(c) for c in convs)))


def build_conversations(
    splits: Mapping[str, Any],
    trajectories: Mapping[str, Mapping[str, Any]],
    inventories: Mapping[str, Mapping[str, Any]],
    lexicons: Mapping[str, Mapping[str, Any]],
    cfg: ProjectConfig,
    llm: ModelClient,
    *,
    simulator: Simulator | None = None,
    probes: Mapping[str, Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(value, metadata): the audited conversation tasks of every published task (`probes`: the tool_probes
    values, whose failed calls seed error-recovery conversations). The search tools serve the published
    retrieval_index (`served_inventories`) once it exists."""
    registry = ToolRegistry.from_inventories(served_inventories(inventories, cfg))
    specs = registry.by_platform_name
    by_traj = {
        t["trajectory_id"]: t
        for v in trajectories.values()
        for t in (v.get("trajectories") or [])
        if "trajectory_id" in t
    }
    noun_of = lexicon_noun_of(lexicons)
    catalogue = lexicon_catalogue_tools(lexicons)
    tool_noun = lexicon_tool_noun(lexicons)
    cache: dict[tuple[str, str, tuple[str, ...]], str] = {}

    def can(row: Mapping[str, Any]) -> str:
        return offered_capabilities(row, registry, tool_noun, cache, catalogue)

    convs: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    # a conversation carries no tool-use policy: a task a policy makes unanswerable is talked through as it is
    # without it (its calls are the policy's lineage, `records.unrestricted`)
    rows = [unrestricted(r) for r in splits.get("tasks") or []]
    for row in rows:
        if row["domain"] not in inventories:
            skipped.append({"source_task_id": row["id"], "case_pattern": "*", "reason": "tool_inventory missing"})
            continue
        task = Task.model_validate(row)
        if about_catalogue(row, specs, catalogue):
            skipped.append({"source_task_id": row["id"], "case_pattern": "*",
                            "reason": "asks about the tools' own catalogue (lexicon chat: false)"})  # fmt: skip
            continue
        try:
            made, why = conversation_tasks(
                row,
                specs,
                trajectory=by_traj.get(task.lineage.trajectory_id),
                noun_of=noun_of,
                no_call_every=cfg.conversations.no_call_every,
                cfg_seed=cfg.seed,
                can=can(row),
            )
        except ConversationTaskError as e:
            skipped.append({"source_task_id": task.id, "case_pattern": "*", "reason": str(e)})
            continue
        qkey = question_key(row)
        near = near_key(row, by_traj.get(task.lineage.trajectory_id))
        for conv in made:
            conv["question_key"] = (
                qkey if conv["case_pattern"] != "no_call" else _digest(["no_call", conv["language"], conv["task"]])
            )
            if conv["case_pattern"] != "no_call":
                conv["near_key"] = near
        convs.extend(made)
        skipped.extend(why)
        for single in count_singles(row, specs, tool_noun, cfg.seed):
            single["question_key"] = _digest(["count", single["language"], single["counted"]])
            if all(d["question_key"] != single["question_key"] for d in convs):  # one per question, all splits
                convs.append(single)
    _cover_no_call(convs, rows, specs, by_traj, noun_of, cfg, can)
    convs, duplicates = select(convs, cfg.conversations.multi_turn_share, cfg.seed)
    skipped.extend(duplicates)
    convs, over = no_call_share(convs, cfg.conversations.no_call_every, cfg.seed)
    skipped.extend(over)
    languages = {d.name: d.language for d in cfg.domains if d.name in inventories}
    splits_of: dict[str, list[str]] = {}
    for row in splits.get("tasks") or []:
        splits_of.setdefault(row["domain"], []).append(str(row.get("split") or "train"))
    made, why = asyncio.run(stateful_tasks(registry, cfg, languages, splits_of, noun_of))
    convs.extend(made)
    skipped.extend(why)
    c = cfg.conversations
    caps = Caps(max_user_turns=c.max_user_turns, max_calls=c.max_calls, max_agent_steps=c.max_agent_steps)
    sim = simulator or ModelSimulator(llm)
    required = {spec.name: [p for p in spec.required_params if p not in spec.generic_params.names()]
                for spec in specs.values()}  # fmt: skip
    failures = probe_failures(probes or {})
    entity_at = lexicon_param_entity(lexicons)

    def entity_of(platform: str, name: str, param: str) -> str | None:
        spec = specs.get((platform, name))
        return entity_at(spec.tool_id, param) if spec is not None else None

    variants: list[dict[str, Any]] = []
    for conv in convs:
        share = c.error_recovery_share.get(str(conv.get("split")), 0.0)
        if conv["case_pattern"] in RECOVERABLE and chosen(conv, share, cfg.seed):
            found = recovery_variants(conv, failures, required, entity_of)
            if not found:
                skipped.append({"source_task_id": conv["source_task_id"], "case_pattern": "error_recovery",
                                "reason": "no call can be made wrong"})  # fmt: skip
            variants.extend(found)
    played = [*convs, *variants]
    results = asyncio.run(audit(played, registry, cfg, sim, caps)) if played else []
    audited = dict(zip((t["id"] for t in played), results, strict=True))
    recovered: dict[str, dict[str, Any]] = {}
    for v in variants:
        score, episode = audited[v["id"]]
        ok, shown = recovery_verified(v, episode)
        if ok and score["goal_success"] and not score["sim_fault"]:
            recovered.setdefault(v["recovers"], v)  # the first kind the tools really refused
        else:
            skipped.append({"source_task_id": v["source_task_id"], "case_pattern": "error_recovery",
                            "reason": shown if not ok else f"oracle: {score['reason']}"})  # fmt: skip
    published: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    transcripts: list[dict[str, Any]] = []
    for conv in beside(convs, recovered):
        score, episode = audited[conv["id"]]
        conv["oracle_audit"] = {
            "goal_success": score["goal_success"],
            "sim_faults": len(score["sim_faults"]),
            "reason": score["reason"],
            "stop_reason": score["stop_reason"],
            "turns": score["turns"],
        }
        users = [str(m.get("content") or "") for m in episode["messages"] if m.get("role") == "user"]
        if conv["language"] == "ko" and not register_consistent(users, conv["persona"]):
            score = {
                **score,
                "goal_success": False,
                "reason": f"user turns leave the persona's {conv['persona']['격식']}",
            }
        if score["goal_success"] and not score["sim_fault"]:
            episode = name_found(conv, episode, specs, noun_of, tool_noun)
            conv["golden_messages"] = episode["messages"]  # the oracle's conversation: the training rows
            if conv["language"] == "ko":  # the user lives where the calls found the withheld place
                returned = [str(m.get("content") or "") for m in episode["messages"] if m.get("role") == "tool"]
                conv["persona"] = fit_to_found(conv["persona"], str(conv["initial_message"]), returned)
            conv["tools"] = episode["tools"]
            if conv.get("recovery"):
                failed = next(c for c in episode["calls"] if not c["ok"])
                conv["recovery"]["error"] = next(
                    (str(m.get("content") or "")[:400] for m in episode["messages"]
                     if m.get("role") == "tool" and m.get("tool_call_id") == failed.get("call_id")), ""
                )  # fmt: skip
            published.append(conv)
            if len(transcripts) < 40:
                transcripts.append(
                    {"id": conv["id"], "case_pattern": conv["case_pattern"], "transcript": episode["transcript"]}
                )
        else:
            faults = sorted({f["fault"] for f in score["sim_faults"]})
            dropped.append(
                {
                    "id": conv["id"],
                    "source_task_id": conv["source_task_id"],
                    "case_pattern": conv["case_pattern"],
                    "language": conv["language"],
                    "reason": ", ".join(faults) if faults else score["reason"],
                    "sim_faults": score["sim_faults"],
                    "goal_reason": score["reason"],
                }
            )
    results = [audited[t["id"]] for t in convs]  # the audit counts below: the conversations as published or not
    value = {
        "tasks": published,
        "dropped": dropped,
        "skipped": skipped,
        "simulator": simulator_pin(cfg),
        "transcripts": transcripts,
        "audit": {
            "episodes": len(results),
            "caught": len(dropped),
            "caught_share": round(len(dropped) / len(results), 4) if results else 0.0,
            "sim_fault_episodes": sum(1 for s, _ in results if s["sim_fault"]),
            "oracle_failures": sum(1 for s, _ in results if not s["goal_success"]),
        },
    }
    return value, conversations_metadata(value)


def name_found(
    conv: dict[str, Any], episode: dict[str, Any], specs: Mapping[Any, Any], noun_of: Any, tool_noun: Any = None
) -> dict[str, Any]:
    """The episode (and `conv`'s answer) with the final reply naming what the chain found along the way and the
    conversation has not named ("… 150곳입니다. 해당 시군구는 종로구, 군산시입니다."); as it was when there is nothing
    to name or no noun for it. A request that asks 'which one' first (`asks_which`: the opening asked as one
    question) keeps that form only when the reply names it; otherwise the one-question opening is restored."""
    plain = conv.pop("asks_which", None)
    out = _name_found(conv, episode, specs, noun_of, tool_noun)
    if plain is None or (conv["answer"].get("found") and out is not episode):
        return out
    messages = list(out.get("messages") or [])
    first = next((i for i, m in enumerate(messages) if m.get("role") == "user"), None)
    if first is not None and messages[first].get("content") == conv["initial_message"]:
        messages[first] = {**messages[first], "content": plain}
        conv["initial_message"] = plain
    return {**out, "messages": messages}


def _name_found(
    conv: dict[str, Any], episode: dict[str, Any], specs: Mapping[Any, Any], noun_of: Any, tool_noun: Any = None
) -> dict[str, Any]:
    messages = list(episode.get("messages") or [])
    final = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].get("role") == "assistant"
                  and messages[i].get("content") == conv["answer"]["text"]), None)  # fmt: skip
    if final is None or conv["case_pattern"] == "no_call" or not conv["answer"]["text"]:
        return episode
    said = " ".join(str(m.get("content") or "") for m in messages if m.get("role") in ("user", "assistant"))
    target, names = found_names(conv, episode, said)
    if target is None and conv["language"] == "en":
        about = searched_subject(conv, episode, said)
        text = _inline_found(conv["answer"]["text"], *about) if about else None
        if text is not None:
            conv["answer"] = {**conv["answer"], "text": text, "found": [about[1]]}  # type: ignore[index]
            messages[final] = {**messages[final], "content": text}
            return {**episode, "messages": messages}
    if target is None or (len(names) > 1 and "CMP" in str(conv.get("source_pattern") or "")):
        return episode  # two compared arms' names in a list would not say which is which ('SLK … Daegu and New York')
    call = next(c for c in conv["golden_calls"] if c["name"] == target[0])
    spec = specs.get((call.get("platform"), call["name"]))
    noun = noun_of(spec.tool_id, target[1], conv["language"]) if spec is not None else None
    if (
        not noun and spec is not None and tool_noun is not None
    ):  # the tool's own entity ('시군구' for a district search)
        entry = tool_noun(spec.tool_id, conv["language"]) or {}
        noun = entry.get("noun") or entry.get("sing")
    if not noun:
        return episode
    if conv["language"] == "en":  # the word the conversation used: 'state' after '… in the same state as EWR'
        noun = plain_noun(noun)
        said_one = [w for w in noun.split(" or ") if re.search(rf"\b{re.escape(w)}\b", conv["answer"]["text"])]
        noun = said_one[0] if len(said_one) == 1 else noun
    text = f"{conv['answer']['text']} {found_sentence(conv['language'], noun, names)}"
    inline = _SAME_AS.search(conv["answer"]["text"]) if conv["language"] == "en" and len(names) == 1 else None
    if inline is not None and inline.group(1) == noun:  # 'in the same state as LKP (New York)', not appended after
        text = f"{conv['answer']['text'][: inline.end()]} ({names[0]}){conv['answer']['text'][inline.end() :]}"
    elif conv["language"] == "en" and len(names) == 1:
        text = _named_subject(conv["answer"]["text"], noun, names[0]) or text
    elif conv["language"] == "ko" and len(names) == 1:
        values = conv["answer"].get("values") or answer_values(conv)
        text = _korean_named(conv["answer"]["text"], noun, names[0], values, episode) or text
    conv["answer"] = {**conv["answer"], "text": text, "found": names}
    messages[final] = {**messages[final], "content": text}
    return {**episode, "messages": messages}


def _named_subject(text: str, noun: str, name: str) -> str | None:
    """An English answer whose subject is 'the <noun> of/on/… <X>' with the found name said in one sentence:
    'The artist of the track 'Fast As a Shark' has 2 albums.' → 'Accept, the artist of the track 'Fast As a Shark',
    has 2 albums.', 'Guns N' Roses, the artist who recorded …, has 3 albums.'; 'The albums on Music Videos have 14 tracks.' (one album found) → 'The album on Music Videos,
    Revelations, has 14 tracks.' (blind read s11 r2 #8: '… has 2 albums. The artist is Accept.' read awkwardly);
    None otherwise."""
    if name in text:
        return None
    counted = re.fullmatch(  # 'The number of tracks of the album containing 'X' is 3.' (s17 demo)
        rf"The number of ([a-z]+(?: [a-z]+)?) (?:of|on|in) the ({re.escape(noun)}) "
        rf"(of|on|in|by|from|with|who|that|which|containing) (.+?) is ([\d][\d,.]*)\.",
        text,
    )
    if counted is not None:
        what, _, prep, rest, n = counted.groups()
        what = what[:-1] if n == "1" and what.endswith("s") else what
        return f"{name}, the {noun} {prep} {rest}, has {n} {what}."
    m = re.match(
        rf"The ({re.escape(noun)}s?) (of|on|in|by|from|with|who|that|which|containing) (.+?) (has|have|had|is|are|was|were)\b",
        text,
    )
    if m is None:
        return None
    verb = {"have": "has", "are": "is", "were": "was"}.get(m.group(4), m.group(4))
    rest = text[m.end() :]
    if (
        m.group(2) in ("of", "who", "that", "which", "containing") and m.group(1) == noun
    ):  # 'Guns N' Roses, the artist who …'
        return f"{name}, the {noun} {m.group(2)} {m.group(3)}, {verb}{rest}"
    return f"The {noun} {m.group(2)} {m.group(3)}, {name}, {verb}{rest}"


def _inline_found(text: str, noun: str, name: str) -> str | None:
    """An English answer whose one 'the <noun> who/that/containing … <title>' gets the found name before it: '…
    tracks by Accept, the artist who recorded 'Balls to the Wall'.' at the sentence's end, '… by Accept (the artist
    who recorded 'X') …' inside it; None when the answer says no such phrase, or says it more than once."""
    found = list(re.finditer(rf"\bthe {re.escape(noun)} (?:who|that|which|containing|of|on|with|behind) [^.,;:?!]*?"
                             r"(?:'[^']*(?:'[a-z][^']*)*'|[A-Z0-9][\w&'/-]*(?: [A-Z0-9][\w&'/-]*)*)", text))  # fmt: skip
    if len(found) != 1 or name in text:
        return None
    m = found[0]
    if text[m.end() :].strip() in (".", "!", ""):
        return f"{text[: m.start()]}{name}, {m.group(0)}{text[m.end() :]}"
    return f"{text[: m.start()]}{name} ({m.group(0)}){text[m.end() :]}"


def _korean_named(text: str, noun: str, name: str, values: Sequence[Any], episode: Mapping[str, Any]) -> str | None:
    """A Korean answer that says the found name in its own sentence instead of appending '해당 <noun>는 <name>입니다.'
    (blind read s12 #5, #16: the answer first, then what it was about, read back to front): the noun said once
    before 의/에 takes the name ('궁정동이 속한 시군구의 법정 읍면동은 87곳입니다.' → '궁정동이 속한 종로구의 법정 읍면동은
    87곳입니다.'); an answer that is another spelling of the found thing (a value in the same record as the name, not
    in Hangul: 'Yeoncheon-gun') is said after the name ('연천군(Yeoncheon-gun)입니다.'); None otherwise."""
    if name in text:
        return None
    said = list(re.finditer(rf"{re.escape(noun)}(?=의 |에 |에서 )", text))
    if len(said) == 1 and text.count(noun) == 1:
        return text[: said[0].start()] + name + text[said[0].end() :]
    if len(values) == 1 and isinstance(values[0], str) and values[0] in text and not re.search(r"[가-힣]$", values[0]):
        together = any(
            {name, values[0]} <= {str(x) for x in r.values()} for rs in results_by_call(episode).values() for r in rs
        )
        if together:
            return text.replace(values[0], f"{name}({values[0]})", 1)
    return None


# '… the same <noun> as <code or name>': the found name said in its place ('The state is New York.' appended after
# the answer reads back to front, blind read s11 #4)
_SAME_AS = re.compile(r"\bsame ([a-z]+(?: [a-z]+)?) as ([A-Z0-9][\w&'-]*(?: [A-Z0-9][\w&'-]*)*)")


def beside(convs: Sequence[dict[str, Any]], recovered: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversations to publish: every conversation, its verified recovery copy in its place where it has one
    (`recovered`: conversation id → its variant). The question is answered once, either straight or through a real
    failure and its correction: a copy published beside its original reads as a duplicate (blind read s10: the same
    opening, persona and answer twice). The copy keeps the conversation's split and question."""
    out: list[dict[str, Any]] = []
    for c in convs:
        v = recovered.get(c["id"])
        if v is not None and (v.get("split") != c.get("split") or v["id"] == c["id"]):
            raise ValueError(f"recovery copy {v['id'][:19]} does not stand in for {c['id'][:19]}")
        out.append(v if v is not None else c)
    return out


def offered_capabilities(
    row: Mapping[str, Any],
    registry: Any,
    tool_noun: Any,
    cache: dict[tuple[str, str, tuple[str, ...]], str],
    catalogue: frozenset[str] = frozenset(),
) -> str:
    """What the tools offered with this task look up (its `available_tools`, the conversation's
    `tools_subset`, not the whole domain's): a no_call decline names only what the conversation's tools do, a
    document search by its collection (`SEARCH_SEP`), never the service's own catalogue (`catalogue`: the
    lexicon's `chat: false` tools, '통계 항목')."""
    offered = tuple(sorted(str(n) for n in row.get("available_tools") or []))
    key = (row["domain"], row["language"], offered)
    if key not in cache:
        tool_ids = []
        searches: list[str] = []
        for name in offered:
            try:
                spec = registry.resolve(name, platforms=row.get("platforms") or (), domain=row["domain"])
            except ToolResolutionError:  # a tool gone from the inventory: it names nothing
                continue
            if getattr(getattr(spec, "source", None), "kind", "") == "retrieval":  # a search: its collection
                searches.append(search_collection(spec, row["domain"], row["language"]))
            elif not spec.state_changing and spec.key_acquisition is None and spec.tool_id not in catalogue:
                tool_ids.append(spec.tool_id)
        can = capabilities(tool_ids, tool_noun, row["language"])
        found = next((x for x in searches if x), "")
        cache[key] = f"{can}{SEARCH_SEP}{found}" if can and found else can
    return cache[key]


def search_collection(spec: Any, domain: str, language: str) -> str:
    """What a document-search tool searches, for a decline: its platform's words without the domain
    ('aviation-weather-bulletins' → 'weather bulletins'); in Korean, '자료' (the collection has no Korean name)."""
    if language == "ko":
        return "자료"
    words = str(getattr(spec, "platform", "") or "").split("-")
    if words and words[0] == domain:
        words = words[1:]
    return " ".join(w for w in words if w.isalpha())


def _cover_no_call(
    convs: list[dict[str, Any]],
    rows: Sequence[Mapping[str, Any]],
    specs: Any,
    by_traj: Mapping[str, Any],
    noun_of: Any,
    cfg: ProjectConfig,
    can: Callable[[Mapping[str, Any]], str],
) -> None:
    """Every (domain, language) with tasks gets at least one no_call task (the first source that can make one),
    so that the case breakdown never misses the kind that rewards inaction."""
    if cfg.conversations.no_call_every == 0:
        return
    have = {(c["domain"], c["language"]) for c in convs if c["case_pattern"] == "no_call"}
    made_from = {c["source_task_id"] for c in convs}
    for row in rows:
        key = (row["domain"], row["language"])
        if key in have or row["id"] not in made_from:
            continue
        traj = by_traj.get(str((row.get("lineage") or {}).get("trajectory_id")))
        extra, _ = conversation_tasks(row, specs, trajectory=traj, noun_of=noun_of, no_call_every=1, cfg_seed=cfg.seed,
                                      can=can(row))  # fmt: skip
        no_call = [c for c in extra if c["case_pattern"] == "no_call"]
        if no_call:
            no_call[0]["question_key"] = _digest(["no_call", no_call[0]["language"], no_call[0]["task"]])
            convs.append(no_call[0])
            have.add(key)


def _digest(parts: Any) -> str:
    return "sha256:" + hashlib.sha256(dumps(parts).encode()).hexdigest()[:16]


def question_key(row: Mapping[str, Any]) -> str:
    """What a verified task asks, whatever its tools: the answer frame (pattern, what is counted or asked,
    the options compared) and the answer value. Two tasks that ask the same thing through two code systems
    (census and krgc) share the key."""
    ans = row.get("answer") or {}
    frame = ans.get("frame") or {}
    if frame:
        what = [frame.get("pattern"), " ".join(str(frame.get("description") or "").split()),
                sorted(str(o) for o in frame.get("options") or [])]  # fmt: skip
    else:
        what = [" ".join(str(row.get("query") or "").split())]
    return _digest([row.get("domain"), row.get("language"), what, ans.get("value")])


def near_key(row: Mapping[str, Any], trajectory: Mapping[str, Any] | None) -> dict[str, Any]:
    """What makes two verified tasks near-duplicates in one split: the question's skeleton (what it asks, with its
    names, codes and numbers masked: 'how many airports in the same state as <x>'), its seed values and its
    answer. Two tasks with one skeleton and the same seed or the same answer (JFK / KJFK: 318) ask one question."""
    ans = row.get("answer") or {}
    frame = ans.get("frame") or {}
    seeds = sorted({str(s.get("value")) for s in (trajectory or {}).get("seeds") or [] if s.get("value") is not None})
    said = " ".join(str(frame.get("description") or row.get("query") or "").split())
    shape = skeleton(said, [*seeds, *(frame.get("options") or [])])
    return {
        "skeleton": _digest([row.get("domain"), row.get("language"), frame.get("pattern"), shape]),
        "seeds": seeds,
        "answer": dumps(ans.get("value")),
    }


# conversations that ask one question template (skeleton) in one domain and language, over all splits: three of
# ten English conversations of the s18 r2 read compared two countries' customers
PER_TEMPLATE = 2


def _near_duplicates(picks: Mapping[tuple[str, str], dict[str, Any]]) -> dict[tuple[str, str], str]:
    """group → why it is dropped: the kept pick it nearly duplicates (same split and skeleton, same seed or answer),
    or the `PER_TEMPLATE` kept picks that already ask its template (over all splits)."""
    kept: dict[tuple[str, str], list[dict[str, Any]]] = {}
    per_template: dict[str, list[dict[str, Any]]] = {}
    out: dict[tuple[str, str], str] = {}
    for group, pick in sorted(picks.items(), key=lambda kv: kv[1]["id"]):
        near = pick.get("near_key")
        if not near:
            continue
        bucket = kept.setdefault((group[0], near["skeleton"]), [])
        twin = next((k for k in bucket if set(k["near_key"]["seeds"]) & set(near["seeds"])
                     or k["near_key"]["answer"] == near["answer"]), None)  # fmt: skip
        same = per_template.setdefault(near["skeleton"], [])
        if twin is not None:
            out[group] = f"near-duplicate of {twin['id'][:19]} in {group[0]}"
        elif len(same) >= PER_TEMPLATE:
            out[group] = (
                f"its question template is asked by {PER_TEMPLATE} kept conversations ({same[0]['id'][:19]}, …)"
            )
        else:
            bucket.append(pick)
            same.append(pick)
    return out


def select(
    convs: Sequence[dict[str, Any]], multi_turn_share: float, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """One conversation per underlying question and split: a source task's base case or its multi_turn variant
    (multi_turn for about `multi_turn_share` of the questions that have one), and one source among tasks that
    ask the same thing. Returns the kept tasks (in input order) and the dropped ones as skip rows."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for c in convs:
        groups.setdefault((str(c.get("split")), c["question_key"]), []).append(c)
    picks: dict[tuple[str, str], dict[str, Any]] = {}
    for (split, key), cands in groups.items():
        mts = sorted((c for c in cands if c["case_pattern"] == "multi_turn"), key=lambda c: c["id"])
        rest = sorted((c for c in cands if c["case_pattern"] != "multi_turn"), key=lambda c: c["id"])
        draw = int(hashlib.sha256(dumps([seed, key]).encode()).hexdigest()[:8], 16) % 1000 / 1000
        picks[(split, key)] = mts[0] if mts and (draw < multi_turn_share or not rest) else rest[0]
    twins = _near_duplicates(picks)
    for group in twins:
        del picks[group]
    if multi_turn_share > 0:  # every language and split that has a multi_turn candidate keeps at least one
        for lang, split in sorted({(c["language"], str(c.get("split"))) for c in convs
                                   if c["case_pattern"] == "multi_turn"}):  # fmt: skip
            if any(p["case_pattern"] == "multi_turn" and p["language"] == lang and str(p.get("split")) == split
                   for p in picks.values()):  # fmt: skip
                continue
            found = next((g for g, cands in sorted(groups.items()) if g[0] == split and g not in twins
                          and any(c["case_pattern"] == "multi_turn" and c["language"] == lang for c in cands)),
                         None)  # fmt: skip
            if found is None:
                continue
            group = found
            picks[group] = min((c for c in groups[group] if c["case_pattern"] == "multi_turn"), key=lambda c: c["id"])
    keep = {p["id"] for p in picks.values()}
    dropped: list[dict[str, Any]] = []
    for (split, key), cands in groups.items():
        if (split, key) in twins:
            dropped.extend({"source_task_id": c["source_task_id"], "case_pattern": c["case_pattern"],
                            "reason": twins[(split, key)]} for c in cands)  # fmt: skip
            continue
        pick = picks[(split, key)]
        for c in cands:
            if c["id"] != pick["id"]:
                dropped.append({"source_task_id": c["source_task_id"], "case_pattern": c["case_pattern"],
                                "reason": f"same question as {pick['id'][:19]} in {split}"})  # fmt: skip
    return [c for c in convs if c["id"] in keep], dropped


def no_call_share(
    convs: Sequence[dict[str, Any]], every: int, seed: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The conversations with at most one no_call per `every` tool-calling conversations in each (domain,
    language) (at least one where there is one), so that a language whose tasks are seldom askable does not end up
    mostly no_call (blind read s11 r2: 5 of 10 Korean conversations). The kept ones say different requests where
    they can, within a domain and across the domains of a language. Returns the kept conversations (in input order) and the dropped no_calls as skip rows."""
    if every <= 0:
        return list(convs), []
    keep: set[str] = set()
    dropped: list[dict[str, Any]] = []
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    tools: Counter[tuple[str, str]] = Counter()
    for c in convs:
        key = (c["domain"], c["language"])
        if c["case_pattern"] == "no_call":
            groups.setdefault(key, []).append(c)
        else:
            tools[key] += 1
    said: dict[str, set[str]] = {}  # language → requests kept in another domain
    for key, cands in sorted(groups.items()):
        allowed = max(1, round(tools[key] / every))
        order = sorted(
            cands, key=lambda c: hashlib.sha256(dumps([seed, c["id"], "no_call share"]).encode()).hexdigest()
        )
        first: dict[str, dict[str, Any]] = {}
        for c in order:  # one per request first, and a request no other domain says ('turn the heating up' in
            first.setdefault(c["task"], c)  # music and aviation: blind read s15 conversations #3, #19)
        elsewhere = said.setdefault(key[1], set())
        fresh = [c for c in first.values() if c["task"] not in elsewhere]
        rest = [c for c in order if c not in fresh]
        for i, c in enumerate([*fresh, *rest]):
            if i < allowed:
                keep.add(c["id"])
                elsewhere.add(c["task"])
            else:
                dropped.append({"source_task_id": c["source_task_id"], "case_pattern": "no_call",
                                "reason": f"no_call share: {allowed} per {tools[key]} tool-calling conversations "
                                          f"in {key[0]}/{key[1]}"})  # fmt: skip
    return [c for c in convs if c["case_pattern"] != "no_call" or c["id"] in keep], dropped


def counts(tasks: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """case kind → language → tasks (every kind listed)."""
    n = Counter((t["case_pattern"], t["language"]) for t in tasks)
    langs = sorted({t["language"] for t in tasks}) or ["en"]
    return {k: {lang: n[(k, lang)] for lang in langs} for k in CASE_KINDS}


def conversations_metadata(value: Mapping[str, Any]) -> dict[str, Any]:
    tasks = value["tasks"]
    table = [{"case": k, **v, "total": sum(v.values())} for k, v in counts(tasks).items()]
    langs = sorted({t["language"] for t in tasks}) or ["en"]
    a = value["audit"]
    reasons = Counter(d["reason"] for d in value["dropped"])
    preview = [
        {"case": t["case_pattern"], "lang": t["language"], "initial_message": t["initial_message"][:140],
         "hidden_info": str(t["hidden_info"])[:60]}
        for t in tasks[:12]
    ]  # fmt: skip
    return {
        "tasks": len(tasks),
        "dropped_by_oracle_audit": a["caught"],
        "oracle_audit_caught_share": a["caught_share"],
        "sim_fault_episodes": a["sim_fault_episodes"],
        "error_recovery": sum(1 for t in tasks if t.get("recovery")),
        "skipped_variants": len(value["skipped"]),
        "by_case": md_table(table, ["case", *langs, "total"]),
        "dropped_reasons": md_table([{"reason": r, "n": n} for r, n in reasons.most_common()], ["reason", "n"]),
        "preview": md_table(preview, ["case", "lang", "initial_message", "hidden_info"], limit=12),
        "simulator_backend": ", ".join(
            f"{k}: {v['backend']}/{v['model']}" for k, v in value["simulator"]["languages"].items()
        ),
    }


def conversations_frame(value: Mapping[str, Any]) -> "pd.DataFrame":
    """One row per published task, for the GX suite expectations/conversations.json."""
    import pandas as pd

    from factory.llm.simulator import mentions_value

    rows = []
    for t in value["tasks"]:
        crit = t["success_criteria"]
        audit_row = t.get("oracle_audit") or {}
        rows.append(
            {
                "id": t["id"],
                "case_pattern": t["case_pattern"],
                "split": t.get("split"),
                "initial_message": t["initial_message"],
                "oracle_goal_success": bool(audit_row.get("goal_success")),
                "oracle_sim_faults": int(audit_row.get("sim_faults", -1)),
                "oracle_reason": str(audit_row.get("reason", "not audited")),
                "opening_leaks_hidden_info": any(
                    mentions_value(t["initial_message"], v) for v in t["hidden_info"].values()
                ),
                "criteria_consistent": bool(crit["no_call"]) == (t["case_pattern"] == "no_call")
                and (not crit["required_calls"]) == bool(crit["no_call"]),
                "hidden_info_consistent": bool(t["hidden_info"]) == (t["case_pattern"] == "multi_turn"),
            }
        )
    columns = ["id", "case_pattern", "split", "initial_message", "oracle_goal_success", "oracle_sim_faults",
               "oracle_reason", "opening_leaks_hidden_info", "criteria_consistent", "hidden_info_consistent"]  # fmt: skip
    return pd.DataFrame(rows, columns=columns)
