"""Questions over a third-party OpenAPI document (the Swagger Petstore of tests/realtools/fixtures, not written
here), realized by the rules writer from the rule lexicon alone (no reviewed lexicon file): the data a user gets
from their own tools. The Prism run of session 15 asked "How many more pets does status ['available'] have than
status ['sold']?"."""

import json
from pathlib import Path

import pytest

from factory.frames import frames_for
from factory.llm import rules
from factory.synthesis.answers import answer_text
from factory.synthesis.queries import answer_frame, writer_input
from factory.tools.openapi import load_openapi
from factory.tools.registry import ToolRegistry

DOC = Path(__file__).resolve().parents[1] / "realtools" / "fixtures" / "petstore" / "petstore.json"


@pytest.fixture(scope="module")
def petstore():
    doc = json.loads(DOC.read_text(encoding="utf-8"))
    specs = ToolRegistry(load_openapi(doc, domain="petstore", platform="petstore", spec_locator=str(DOC)))
    return specs, frames_for(specs)


def _cmp(specs, cmp: str, order: str, value) -> dict:
    tid = next(t for t, s in specs.items() if s.name == "find_pets_by_status")
    acts = [{"step": 1, "tool": "find_pets_by_status", "tool_id": tid, "args": {"status": [s]}, "records": n}
            for s, n in (("available", 5), ("sold", 1))]  # fmt: skip
    return {
        "trajectory_id": "sha256:" + "0" * 64, "template": "CMP", "pattern": "CMP", "junctions": [],
        "seeds": [{"tool_id": tid, "param": "status", "value": [s]} for s in ("available", "sold")],
        "thresholds": [], "bridge_values": [], "golden_actions": acts,
        "describe": {"ask": "count", "tool_id": tid, "compare": {"param": "status", "tool_id": tid}, "order": order,
                     "cmp": cmp},
        "answer": {"type": "number" if cmp == "difference" else "string", "value": value, "fields": [],
                   "counts": [5, 1]},
    }  # fmt: skip


def _ask(t, specs, frames, variant=0) -> tuple[str, str]:
    inp = writer_input(t, specs, "en", variant, frames)
    return rules.query_writer(inp).query, answer_text(t["answer"], "en", answer_frame(inp))


def test_an_attribute_compared_reads_as_the_records_with_each_value(petstore):
    specs, frames = petstore
    q, a = _ask(_cmp(specs, "difference", "more", 4), specs, frames)
    assert q == "How many more pets are there with status available than with status sold?", q
    assert a == "There are 4 more pets with status available than with status sold: 5 against 1.", a
    q, a = _ask(_cmp(specs, "winner", "fewer", ["sold"]), specs, frames)
    assert q == "Which status has fewer pets, available or sold, and by how many?", q
    assert a == "There are fewer pets with status sold, by 4: 1 against 5.", a
    forms = [_ask(_cmp(specs, "winner", "more", ["available"]), specs, frames, v)[0] for v in range(4)]
    assert not any("[" in f or "does status" in f for f in forms), forms


def test_a_pet_is_one_record_not_its_tags(petstore):
    """get_pet_by_id returns a Pet, which holds `tags` (an array of objects): that array was taken for the record
    list, so 'How many pets are there in total with status sold?' counted the tags of the pets (19, not 5)."""
    specs, _ = petstore
    by_name = {s.name: s for s in specs.values()}
    assert by_name["get_pet_by_id"].records_path is None
    assert {"id", "name", "status"} <= set(by_name["get_pet_by_id"].output_fields)
    assert by_name["find_pets_by_status"].records_path is None  # the body is the list


def test_a_bare_answer_the_tool_does_not_name_is_not_asked(petstore):
    """login_user returns a string the document does not describe: the s15 run asked 'What is the observed in
    results of the user with the same password and username as the user with name that needs to be fetched
    user1?' (the placeholder description of an inferred field taken for its label)."""
    from factory.labels import field_label
    from factory.synthesis.phrasing import Unphraseable

    specs, frames = petstore
    by_name = {s.name: (t, s) for t, s in specs.items()}
    (gt, _), (lt, login) = by_name["get_user_by_name"], by_name["login_user"]
    from factory.tools.observed import OBSERVED_DESCRIPTION
    from factory.tools.spec import OutputField

    login = login.model_copy(update={"output_fields": {"value": OutputField(name="value", type="string",
                                                                           description=OBSERVED_DESCRIPTION)}})  # fmt: skip
    assert field_label(login, "value") == "value"
    specs = type(specs)([login if s.name == "login_user" else s for s in specs.values()])
    t = {
        "trajectory_id": "sha256:" + "1" * 64, "template": "chain", "pattern": "SEQ",
        "junctions": [{"from": "get_user_by_name.password+username", "to": "login_user.password+username",
                       "type": "SEQ", "n": 1, "width": 1, "process": None}],
        "seeds": [{"tool_id": gt, "param": "username", "value": "user1"}], "thresholds": [], "bridge_values": [],
        "golden_actions": [
            {"step": 1, "tool": "get_user_by_name", "tool_id": gt, "args": {"username": "user1"}, "records": 1},
            {"step": 2, "tool": "login_user", "tool_id": lt, "args": {"username": "user1", "password": "x"},
             "records": 1}],
        "describe": {"ask": "value", "chain": [gt, lt], "field": "value", "tool_id": lt},
        "answer": {"type": "string", "value": "logged in", "fields": ["value"]},
    }  # fmt: skip
    with pytest.raises(Unphraseable, match="does not say what its answer is"):
        writer_input(t, specs, "en", 0, frames_for(specs))


def test_a_choice_of_two_keeps_its_margin_for_the_grader(petstore):
    # s15 en2 #16: 'which one has fewer routes, and by how many?' was graded on the side alone
    specs, frames = petstore
    frame = answer_frame(writer_input(_cmp(specs, "winner", "fewer", ["sold"]), specs, "en", 0, frames))
    assert frame["pattern"] == "WHICH" and frame["margin"] == 4
    frame = answer_frame(writer_input(_cmp(specs, "difference", "more", 4), specs, "en", 0, frames))
    assert frame["margin"] is None  # the difference is the value itself
