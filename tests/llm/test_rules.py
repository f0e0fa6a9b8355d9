"""The rules backend serves every role, deterministically and sensibly."""

import pytest

from factory.llm import rules
from factory.llm.roles import ROLES
from factory.llm.schemas import (
    AgentResult,
    AnswerLeakageInput,
    AnswerMaterial,
    DecorativeChainInput,
    EdgeProposalInput,
    FieldBrief,
    NonGradableInput,
    ParamBrief,
    QueryWriterInput,
    ToolBrief,
    TrajectoryStep,
)
from factory.llm.service import LLM
from factory.model_config import ROLE_NAMES, ModelsConfig
from factory.prompts import josa
from tests.llm.samples import FIND_AIRLINE, LIST_FLIGHTS, STEPS, fake_executor, sample_inputs


@pytest.fixture
def llm() -> LLM:
    return LLM(ModelsConfig(roles={}), cache_path=None)


@pytest.mark.parametrize("name", ROLE_NAMES)
def test_rules_cover_every_role(llm: LLM, name: str) -> None:
    inp = sample_inputs()[name]
    spec = ROLES[name]
    r = llm.resolve(inp, fake_executor) if name == "agent_resolver" else llm.call(name, inp)
    assert r.implementation == "rules" and r.backend == "rules" and r.model == rules.RULES_VERSION
    assert isinstance(r.output, spec.output_model)
    assert r.ok and r.provenance()["backend"] == "rules"
    # deterministic
    again = llm.resolve(inp, fake_executor) if name == "agent_resolver" else llm.call(name, inp)
    assert again.output == r.output
    # the rules output passes the role's own guards (a model reply is held to the same checks); rules do not
    # paraphrase (the question comes back unchanged, recorded `template` by the stage), which the guard
    # would reject from a model
    if name == "query_paraphrase":
        assert r.output.query == inp.query and spec.check(inp, r.output) == [
            "the paraphrase repeats the question unchanged"
        ]
    elif name != "agent_resolver":
        assert spec.check(inp, r.output) == []
    if name == "fluency_scorer":  # rules cannot measure fluency: no text gets a score
        assert r.output.scores == [None] * len(inp.texts)


def test_edge_proposal_binds_by_evidence_and_never_generic() -> None:
    out = rules.edge_proposal(EdgeProposalInput(source=FIND_AIRLINE, target=LIST_FLIGHTS))
    assert [(b.source_field, b.target_param) for b in out.bindings] == [("carrier", "carrier")]
    assert out.feasibility_score >= 0.6
    assert "serviceKey" not in out.default_candidates and "pageNo" not in out.default_candidates
    assert out.default_candidates["origin"] == ["JFK", "LGA", "EWR"]
    # a generic param with a perfectly matching field is still never bound
    src = FIND_AIRLINE.model_copy(update={"fields": [*FIND_AIRLINE.fields, FieldBrief(name="serviceKey")]})
    assert all(
        b.target_param != "serviceKey"
        for b in rules.edge_proposal(EdgeProposalInput(source=src, target=LIST_FLIGHTS)).bindings
    )


def test_edge_proposal_value_overlap_and_unrelated_tools() -> None:
    src = ToolBrief(name="airport_lookup", fields=[FieldBrief(name="faa", samples=["JFK", "EWR"])])
    tgt = ToolBrief(name="departures", params=[ParamBrief(name="origin", required=True, enum=["JFK", "LGA", "EWR"])])
    out = rules.edge_proposal(EdgeProposalInput(source=src, target=tgt))
    assert [b.target_param for b in out.bindings] == ["origin"]  # names differ, values match
    unrelated = ToolBrief(name="weather", fields=[FieldBrief(name="humidity", type="number", samples=[40.5])])
    low = rules.edge_proposal(EdgeProposalInput(source=unrelated, target=tgt))
    assert low.bindings == [] and low.feasibility_score < 0.3


def test_one_shared_long_id_binds_a_target_fed_by_several_listings() -> None:
    """get_pet_by_id accepted three ids, one from each of three listings: the one findByStatus emitted binds
    it (an id of 16 digits cannot coincide); one shared short number among as many does not."""
    src = ToolBrief(name="find_pets", fields=[FieldBrief(name="id", type="integer", samples=[
        8814567081365689, -8337430086166439, 2714723666389553, 1, 2])])  # fmt: skip
    tgt = ToolBrief(name="get_pet_by_id", params=[ParamBrief(name="petId", type="integer", required=True,
        examples=[8814567081365689, -844580079540367, 7821176537179293])])  # fmt: skip
    assert [(b.source_field, b.target_param) for b in rules.edge_proposal(EdgeProposalInput(source=src, target=tgt)).bindings] == [("id", "petId")]  # fmt: skip
    short = tgt.model_copy(update={"params": [tgt.params[0].model_copy(update={"examples": [1, 57, 99]})]})
    assert rules.edge_proposal(EdgeProposalInput(source=src, target=short)).bindings == []


def test_edge_transform_date_format() -> None:
    src = ToolBrief(name="a", fields=[FieldBrief(name="date", samples=["2013-01-05"])])
    tgt = ToolBrief(name="b", params=[ParamBrief(name="date", examples=["20130105"])])
    assert rules.edge_proposal(EdgeProposalInput(source=src, target=tgt)).bindings[0].transform == "date:YYYYMMDD"


def _writer(language: str, pattern: str, variant: int) -> QueryWriterInput:
    seeds = (
        {"항공사": "Delta Air Lines", "날짜": "2013-01-05"}
        if language == "ko"
        else {"airline": "Delta Air Lines", "date": "2013-01-05"}
    )
    desc = "항공편 수" if language == "ko" else "the number of flights"
    return QueryWriterInput(
        pattern=pattern,
        language=language,
        steps=STEPS,
        seed_values=seeds,
        variant=variant,
        answer=AnswerMaterial(type="number", value=912.0, description=desc),
    )


@pytest.mark.parametrize("language", ["en", "ko"])
@pytest.mark.parametrize("pattern", ["SEQ", "SEQ+FAN", "DRV", "SEM", "CMP", "COND", "MIXED"])
def test_query_templates_all_patterns(language: str, pattern: str) -> None:
    for variant in range(3):
        inp = _writer(language, pattern, variant)
        out = rules.query_writer(inp)
        assert out.answer == "912"
        assert ROLES["query_writer"].check(inp, out) == [], out.query
        assert "{" not in out.query and "  " not in out.query


def test_josa() -> None:
    assert josa("서울", "은/는") == "서울은" and josa("부산", "을/를") == "부산을" and josa("대구", "이/가") == "대구가"
    assert (
        josa("항공편 수", "은/는") == "항공편 수는"
        and josa("2013", "을/를") == "2013을"
        and josa("서울", "으로/로") == "서울로"
    )


def test_judges() -> None:
    leak = rules.answer_leakage(
        AnswerLeakageInput(
            query="Delta Air Lines (DL) flights on 2013-01-05?",
            answer="912",
            intermediate_values=["DL"],
            seed_values=["Delta Air Lines"],
        )
    )
    assert leak.verdict and leak.reason.startswith("intermediate_in_query")
    ans = rules.answer_leakage(AnswerLeakageInput(query="Is it 912 flights for Delta?", answer="912"))
    assert ans.verdict and ans.reason.startswith("answer_in_query")
    # '9' inside '2019' is not the answer 9; short values are ignored
    assert not rules.answer_leakage(AnswerLeakageInput(query="Flights in 2019?", answer="19")).verdict

    assert rules.non_gradable(NonGradableInput(query="What are the latest flights?", answer="x")).reason.startswith(
        "vague"
    )
    assert rules.non_gradable(NonGradableInput(query="최근 인구는?", answer="1", language="ko")).verdict
    assert rules.non_gradable(NonGradableInput(query="q", answer="")).reason.startswith("empty")
    assert rules.non_gradable(NonGradableInput(query="Weather now?", answer="3", realtime=True)).reason.startswith(
        "realtime"
    )
    assert rules.non_gradable(NonGradableInput(query="List them", answer="a", answer_items=50)).reason.startswith(
        "answer_too_long"
    )

    ans = AnswerMaterial(value=912, description="flights")
    unused = [
        TrajectoryStep(step=1, tool="a", summary="s"),
        TrajectoryStep(step=2, tool="b", summary="s", feeds_answer=True),
    ]
    assert rules.decorative_chain(DecorativeChainInput(query="q?", steps=unused, answer=ans)).reason.startswith(
        "step_unused"
    )
    skippable = DecorativeChainInput(query="How many DL flights?", steps=STEPS, answer=ans)
    assert rules.decorative_chain(skippable).reason.startswith("step_skippable")
    assert not rules.decorative_chain(
        DecorativeChainInput(query="How many Delta flights?", steps=STEPS, answer=ans)
    ).verdict


def test_agent_replay_records_errors() -> None:
    inp = sample_inputs()["agent_resolver"]
    llm = LLM(ModelsConfig(roles={}), cache_path=None)
    r = llm.resolve(inp, fake_executor)
    assert isinstance(r.output, AgentResult) and r.output.final_answer == "912"
    assert [c.tool for c in r.output.trace] == ["find_airline", "list_flights"]

    def broken(tool: str, args: dict) -> None:
        raise TimeoutError("slow")

    bad = llm.resolve(inp, broken).output
    assert bad.stop_reason == "error" and "TimeoutError" in bad.trace[0].error
