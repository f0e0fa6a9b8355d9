"""Policies in the exports: the policy sentence ends the system prompt; a changes_answer task exports no tool
call, the unanswerable sentence as the answer and an empty golden path in the RL ground truth."""

from types import SimpleNamespace

from factory.export import formats
from factory.retrieval import policy

TASK = {
    "id": "sha256:t",
    "domain": "aviation",
    "language": "en",
    "query": "Which airline flies the tail number N14228?",
    "answer": {"type": "string", "value": "United Air Lines Inc.", "text": "United Air Lines Inc. flies it.",
               "fields": ["name"], "branch": None},
    "golden_actions": [{"step": 1, "tool": "get_plane", "platform": "faa", "args": {"tailnum": "N14228"}}],
    "alternative_paths": [],
    "available_tools": ["get_plane", "search_aviation_weather"],
    "system_state": {"current_date": "2013-12-31"},
    "max_allowed_calls": 4,
    "reward_basis": ["RESPONSE"],
    "pattern": "SEQ",
    "category": "SEQ",
}  # fmt: skip
TOOLS = SimpleNamespace(hidden_keys=True)


def test_changes_answer_policy_exports_the_refusal_without_calls():
    task = {**TASK, "policy": policy.build_policy(TASK, "changes_answer", "flights")}
    messages, truncated = formats.conversation(task, TOOLS, [], {})  # type: ignore[arg-type]
    system = messages[0]["content"]
    assert system.endswith(task["policy"]["text"]) and "do not use the APIs (faa)" in system
    assert [m["role"] for m in messages] == ["system", "user", "assistant"] and truncated == 0
    assert messages[-1]["content"] == "No permitted tool can answer this question."
    gt = formats.ground_truth(task)
    assert gt["golden_actions"] == [] and gt["answer"]["value"] == "No permitted tool can answer this question."
    assert gt["policy"]["forbidden_sources"] == ["api"]


def test_no_effect_policy_keeps_the_answer_and_states_the_policy():
    task = {**TASK, "policy": policy.build_policy(TASK, "no_effect", "flights")}
    system, _ = formats.system_prompt(task, TOOLS)  # type: ignore[arg-type]
    assert "do not use document search (search_aviation_weather)" in system
    gt = formats.ground_truth(task)
    assert gt["answer"]["value"] == "United Air Lines Inc." and len(gt["golden_actions"]) == 1
    plain, _ = formats.system_prompt(TASK, TOOLS)  # type: ignore[arg-type]
    assert "policy" not in plain.lower()


def test_policy_names_only_the_domains_document_search_not_an_api_tool_called_search():
    # an API tool may be named search_* (the census API's search_census_district): the policy names the domain's
    # retrieval tools when assign_policies knows them
    task = {**TASK, "available_tools": ["get_plane", "search_census_district", "search_aviation_weather"]}
    known = policy.build_policy(task, "no_effect", "flights", ["search_aviation_weather"])
    assert known is not None and "(search_aviation_weather)" in known["text"]
    assert "search_census_district" not in known["text"]
    guessed = policy.build_policy(task, "no_effect", "flights")
    assert guessed is not None and "search_census_district" in guessed["text"]  # without them: every search_* tool
