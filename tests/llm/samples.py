"""One realistic input per role (aviation-like tools), shared by the tests."""

from typing import Any

from factory.llm.schemas import (
    AgentTaskInput,
    AnswerLeakageInput,
    AnswerMaterial,
    DecorativeChainInput,
    EdgeProposalInput,
    FieldBrief,
    FluencyInput,
    GoldenAction,
    NonGradableInput,
    ParamBrief,
    QueryParaphraseInput,
    QueryWriterInput,
    SimulatorInput,
    SourceArgumentsInput,
    ToolBrief,
    TrajectoryStep,
)

FIND_AIRLINE = ToolBrief(
    name="find_airline",
    description="Find airlines by (part of) their name.",
    platform="airline-registry",
    params=[
        ParamBrief(name="name", required=True, examples=["Delta", "United"]),
        ParamBrief(name="serviceKey", required=True),
    ],
    fields=[
        FieldBrief(name="carrier", description="Two-letter carrier code", samples=["DL", "UA"]),
        FieldBrief(name="name", description="Airline name", samples=["Delta Air Lines Inc.", "United Air Lines Inc."]),
    ],
    generic_params=["serviceKey"],
)
LIST_FLIGHTS = ToolBrief(
    name="list_flights",
    description="Flights of a carrier on a date.",
    platform="flight-ops",
    params=[
        ParamBrief(name="carrier", description="carrier code", required=True, examples=["UA", "DL", "AA"]),
        ParamBrief(name="date", required=True, examples=["2013-01-05"]),
        ParamBrief(name="origin", enum=["JFK", "LGA", "EWR"]),
        ParamBrief(name="serviceKey", required=True),
        ParamBrief(name="pageNo", type="integer"),
    ],
    fields=[FieldBrief(name="tailnum", samples=["N14228"]), FieldBrief(name="dep_delay", type="number")],
    generic_params=["serviceKey", "pageNo"],
)
STEPS = [
    TrajectoryStep(step=1, tool="find_airline", summary="look up the airline's code", passed_values=["DL"]),
    TrajectoryStep(
        step=2, tool="list_flights", summary="list its flights on the date", feeds_answer=True, result_count=912
    ),
]
ANSWER = AnswerMaterial(type="number", value=912, fields=["totalCount"], description="the number of flights")


def sample_inputs() -> dict[str, Any]:
    return {
        "edge_proposal": EdgeProposalInput(source=FIND_AIRLINE, target=LIST_FLIGHTS),
        "source_arguments": SourceArgumentsInput(tool=LIST_FLIGHTS, known_values={"carrier": ["DL"]}),
        "query_writer": QueryWriterInput(
            pattern="SEQ",
            language="en",
            steps=STEPS,
            seed_values={"airline": "Delta Air Lines", "date": "2013-01-05"},
            answer=ANSWER,
        ),
        "query_paraphrase": QueryParaphraseInput(
            query="How many flights did Delta Air Lines operate on 2013-01-05?",
            answer="912",
            must_keep=["Delta Air Lines", "2013-01-05"],
            forbidden=["912", "DL"],
        ),
        "judge_answer_leakage": AnswerLeakageInput(
            query="How many flights did Delta Air Lines operate on 2013-01-05?",
            answer="912",
            intermediate_values=["DL"],
            seed_values=["Delta Air Lines", "2013-01-05"],
        ),
        "judge_non_gradable": NonGradableInput(query="How many flights did Delta operate on 2013-01-05?", answer="912"),
        "judge_decorative_chain": DecorativeChainInput(
            query="How many flights did Delta Air Lines operate on 2013-01-05?",
            steps=STEPS,
            answer=ANSWER,
        ),
        "fluency_scorer": FluencyInput(
            texts=["How many flights did Delta Air Lines operate on 2013-01-05?", "flights Delta how many 2013-01-05"]
        ),
        "agent_resolver": AgentTaskInput(
            messages=[{"role": "user", "content": "How many flights did Delta Air Lines operate on 2013-01-05?"}],
            tools=[],
            golden_actions=[
                GoldenAction(step=1, tool="find_airline", args={"name": "Delta"}),
                GoldenAction(step=2, tool="list_flights", args={"carrier": "DL", "date": "2013-01-05"}),
            ],
            golden_answer="912",
        ),
        "user_simulator": SimulatorInput(
            persona={"register": "formal", "style": "relaxed", "digital_literacy": "high"},
            task="How many flights did Delta Air Lines operate on 2013-01-05?",
            hidden_info={"airline": "Delta Air Lines"},
            answer_values=[912],
            transcript=[
                {"role": "user", "content": "Hello, how many flights did an airline operate on 2013-01-05?"},
                {"role": "assistant", "content": "Which airline do you mean?"},
            ],
        ),
    }


def fake_executor(tool: str, args: dict[str, Any]) -> Any:
    if tool == "find_airline":
        return {"items": [{"carrier": "DL", "name": "Delta Air Lines Inc."}]}
    if tool == "list_flights":
        return {"totalCount": 912, "items": [{"tailnum": "N14228"}]}
    raise KeyError(f"unknown tool {tool}")
