"""RAG-only tasks (issue 17, hop type RAG): a question answered from one passage the domain's document search finds
(a reviewed passage fact), golden action the search citing the passage; it replays to its stored answer, and
decontamination rule (b) drops one whose answer an executed API response gives."""

import asyncio
from pathlib import Path
from types import SimpleNamespace as NS

import numpy as np
import pytest
import yaml

from factory.config import parse_config
from factory.filters import cascade
from factory.retrieval import decontam
from factory.synthesis import multisource
from factory.synthesis import rag_phrasing as rp
from tests.synthesis.test_multisource import open_synthesis_index

ROOT = Path(__file__).resolve().parents[2]
NOTES = [
    ("Let There Be Rock (AC/DC)",
     "Album note: Let There Be Rock by AC/DC.\n\nThe store sold 14 track copies for 13.86 USD in 12 invoices, first on "
     "2009-01-11 and last on 2013-08-02; buyers came from 10 countries (most units: USA, 4)."),
    ("Big Ones (Aerosmith)", "Album note: Big Ones by Aerosmith.\n\nNo copy of its tracks was sold in the store's invoices."),
    ("Jazz (artist)", "Jazz albums in the catalogue run longer than rock albums on average."),
]  # fmt: skip


def test_rag_only_quota_is_a_small_configurable_share():
    assert multisource.rag_only_quota(0.0, 12) == 0
    assert multisource.rag_only_quota(0.1, 0) == 1 and multisource.rag_only_quota(0.1, 9) == 1
    assert multisource.rag_only_quota(0.1, 10) == 2  # 10 chains: 1.1 → 2
    assert multisource.rag_only_quota(0.5, 4) == 4
    assert multisource.HOPS[multisource.RAG_ONLY] == 1 and multisource.RAG_ONLY not in multisource.hop_weights()


def _world(tmp: Path):
    """A music project whose only source is the document search over NOTES (fake embedder), and its search tool."""
    from factory.retrieval import corpus
    from factory.tools.sources import load_domain_tools

    raw = {
        "data_dir": str(tmp / "data"),
        "domains": [
            {
                "name": "music",
                "sources": [{"kind": "retrieval", "collection": "catalogue_notes"}],
                "retrieval": {
                    "collection": "catalogue_notes",
                    "sources": [{"path": "x", "licence": "CC0", "language": "en"}],
                },
            }
        ],
    }
    cfg = parse_config(yaml.safe_dump(raw), project_dir=tmp)
    docs = [corpus.Document(title, text, f"src/{i}") for i, (title, text) in enumerate(NOTES)]
    _, chunks = open_synthesis_index(cfg, docs)
    (tool,) = load_domain_tools(cfg.domain("music"), cfg)
    return cfg, chunks, tool


def test_a_rag_only_task_from_a_passage_fact_replays_and_rule_b_drops_one_an_api_answers(tmp_path):
    from factory.tools.executor import ToolExecutor

    cfg, chunks, search = _world(tmp_path)
    gold = next(c for c in chunks if c["title"] == "Let There Be Rock (AC/DC)")
    ctx = NS(passages=rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / "music.yaml"), language="en")

    async def go():
        async with ToolExecutor([search], cfg.executor) as ex:
            built = await multisource._rag_only(ctx, ex, search, gold, np.random.default_rng(0), 5)
            assert not isinstance(built[0], str), built
            fact, doc, tres = built
            chain = multisource.rag_only_chain(multisource._action(1, search, tres, [gold["id"]]), gold, fact, doc)
            actions, query, answer, spec, junctions, edges, extra = chain
            traj = {"trajectory_id": "sha256:t", "hop_type": "RAG", "hops": 1, "domain": "music", "language": "en",
                    "query": query, "golden_actions": actions, "answer": answer, "answer_spec": spec,
                    "junctions": junctions, "edges": edges, **extra}  # fmt: skip
            inventory = {"tools": [search.model_dump(mode="json", by_alias=True)]}
            (task,) = multisource.task_records({"trajectories": [traj]}, inventory, cfg, "run-1")
            replayed = await multisource.replay(task, ex)
            # the passage no longer states the number: the replay fails
            wrong = {**task, "answer_spec": {**task["answer_spec"], "passage_id": "music:not-served"}}
            return fact, task, replayed, await multisource.replay(wrong, ex)

    fact, task, replayed, wrong = asyncio.run(go())
    # the question names the album by itself and asks a number a reviewed fact reads off its passage
    assert "'Let There Be Rock' by AC/DC" in task["query"] and fact.value in (14, 13.86, 12, 10)
    assert not multisource.states(task["query"], fact.shown)
    assert task["hop_type"] == "RAG" and task["pattern"] == "RAG" and task["answer"]["value"] == fact.value
    (step,) = task["golden_actions"]
    assert step["source_type"] == "retrieval" and step["passage_ids"] == [gold["id"]]
    assert step["args"]["query"] == "Let There Be Rock (AC/DC)"
    assert task["answer_spec"]["kind"] == "passage_value" and "___" in task["answer_spec"]["statement"]
    assert task["answer_spec"]["apis_may_answer"] is True  # the music facts are derivable: policies read it
    assert replayed == {"ok": True, "answer": fact.value, "problems": []}, replayed
    assert not wrong["ok"]
    assert decontam.is_rag_only(task)

    # rule (b): an executed API record holds the answer beside the album title the question names → dropped
    rcfg = NS(retrieval=cfg.retrieval)
    answering = [{"tool": "get_album_sales", "platform": "chinook-store", "call_digest": "sha256:probe", "record_count": 1,
                  "first_record": {"title": "Let There Be Rock", "value": fact.value}}]  # fmt: skip
    v = cascade._rag_verdict(task, decontam.api_records(answering, []), rcfg)
    assert not v.passed and v.reason == decontam.RAG_REASON and "get_album_sales" in v.detail
    # the same number in a record about something the question does not name decides nothing: kept
    other = [{**answering[0], "first_record": {"title": "Big Ones", "value": fact.value}}]
    assert cascade._rag_verdict(task, decontam.api_records(other, []), rcfg).passed


@pytest.mark.parametrize(
    ("title", "text", "reason"),
    [
        ("Big Ones (Aerosmith)", "Album note: Big Ones by Aerosmith. No copy of its tracks was sold.", "unphraseable"),
        ("An untitled note", "The store sold 3 track copies for 2.97 USD in 3 invoices.", "unphraseable"),
    ],
)
def test_a_passage_no_reviewed_fact_reads_gives_no_rag_only_task(title, text, reason):
    ctx = NS(passages=rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / "music.yaml"), language="en")

    class Ex:  # never reached: the passage is rejected before the golden search
        async def call(self, s, args):
            raise AssertionError("no search for an unphraseable passage")

    gold = {"id": "music:x", "title": title, "text": text}
    out = asyncio.run(multisource._rag_only(ctx, Ex(), NS(name="s"), gold, np.random.default_rng(0), 5))
    assert out[0] == reason and out[2] in rp.UNPHRASEABLE_CODES


class _Found:
    """A search that returns the one passage (its title is the query)."""

    def __init__(self, gold):
        self.gold = gold

    async def call(self, s, args):
        assert args["query"] == self.gold["title"]
        return NS(outcome=NS(is_success=True), records=[self.gold], args=args, total_count=1, call_digest="d")


def test_a_korean_bulletin_gives_a_korean_rag_only_question():
    ctx = NS(passages=rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / "korea.yaml"), language="ko")
    text = "2020년 경기도의 성비(여자 100명당 남자)는 100.9이다. 주택은 모두 4,495,115호이다."
    gold = {"id": "korea:p1", "title": "2020년 경기도 인구주택총조사 결과", "text": text}
    values = set()
    for seed in range(6):
        fact, doc, _ = asyncio.run(
            multisource._rag_only(ctx, _Found(gold), NS(name="s"), gold, np.random.default_rng(seed), 5)
        )
        assert fact.question.startswith("경기도의") and "2020년 인구주택총조사" in fact.question
        assert fact.answer_text.endswith("입니다.") and doc.text == "경기도"
        values.add(fact.value)
    assert values <= {100.9, 4495115}


def test_a_fact_whose_number_the_question_states_is_not_asked():
    """An album whose title holds a number its note states ('14 Shades': 14 track copies sold) is not asked that
    number (the question would state its answer); another fact of the note is."""
    ctx = NS(passages=rp.load_passage_lexicon(ROOT / "lexicon" / "passages" / "music.yaml"), language="en")
    gold = {"id": "music:p", "title": "14 Shades (AC/DC)",
            "text": "Album note: 14 Shades by AC/DC. The store sold 14 track copies for 13.86 USD in 7 invoices."}  # fmt: skip
    for seed in range(6):
        fact, _, _ = asyncio.run(
            multisource._rag_only(ctx, _Found(gold), NS(name="s"), gold, np.random.default_rng(seed), 5)
        )
        assert fact.value in (13.86, 7)
    only = {**gold, "text": "Album note: 14 Shades by AC/DC. The store sold 14 track copies."}
    out = asyncio.run(multisource._rag_only(ctx, _Found(only), NS(name="s"), only, np.random.default_rng(0), 5))
    assert out[0] == "answer_named_in_question"


def test_the_index_waterfall_counts_the_domains_rag_only_tasks_not_every_task_with_a_search():
    from factory.config import RetrievalConfig

    search = {"step": 1, "tool": "search_catalogue_notes", "source_type": "retrieval", "args": {"query": "x"}}
    api = {"step": 1, "tool": "search_tracks", "source_type": "api", "args": {"name": "x"}}
    tasks = [
        {"id": "a", "domain": "music", "hop_type": "RAG", "golden_actions": [search]},
        {"id": "b", "domain": "music", "hop_type": "API-RAG", "golden_actions": [api, {**search, "step": 2}]},
        {"id": "c", "domain": "korea", "hop_type": "RAG", "golden_actions": [search]},
    ]
    _, stats = decontam.decontaminate("music", [], tasks, {}, RetrievalConfig())
    assert stats["rag_only_tasks"] == 1


def test_a_korean_count_followed_by_its_counter_is_the_stated_passage_value():
    """The demo's korea RAG-only task '부산광역시의 단독주택은 … 몇 호인가요?' was dropped stale_label: the replay read
    '단독주택이 234,001호' as not stating 234001, the counter 호 counted as part of the number."""
    from factory.synthesis import answers

    text = "주택은 모두 990,374호로, 아파트가 617,239호(62.3%), 단독주택이 234,001호(23.6%)를 차지했다."
    spec = {"kind": "passage_value", "calls": [{"step": 1, "index": 0, "record": {"id": "p"}}], "passage_id": "p",
            "value": 234001, "statement": "단독주택이 ___호(23.6%)를 차지했다."}  # fmt: skip
    rows = [{"step": 1, "records_list": [{"id": "p", "text": text}]}]
    assert answers.compute(spec, rows)["value"] == 234001
    # a number inside a longer one, or followed by a Latin letter, is still not it
    for other in ("단독주택이 2234,001호", "단독주택이 234,0011호", "단독주택이 234,001a호"):
        assert answers.compute(spec, [{"step": 1, "records_list": [{"id": "p", "text": other}]}])["value"] is None
