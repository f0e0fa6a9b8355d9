"""EDGE Appendix H audits on a hand-built set whose numbers are worked out by hand."""

from factory.splits import overlap, structure
from tests.splits.helpers import make_task


def hand_built():
    train = [
        make_task("d", "q one about A and B", [["A"], ["B"]], junctions=[("get_air_key", "A"), ("A", "B")]),
        make_task("d", "q two about A and C", [["A"], ["C", "C"]], junctions=[("A", "C")]),
        make_task("d", "q three about D", [["D"]]),
    ]
    test = [
        make_task("d", "Q   ONE about a and b", [["A"], ["B"]], junctions=[("A", "B")]),  # verbatim after normalization
        make_task("d", "other question", [["B"], ["E"]], junctions=[("B", "E")], platform="p-geo"),
        make_task("d", "fan question", [["F"], ["F", "F"]], junctions=[("F", "F")], platform="p-geo"),
    ]
    return [{**t, "split": "train"} for t in train] + [{**t, "split": "test"} for t in test]


def test_appendix_h_numbers():
    res = overlap.split_overlap(hand_built(), {"get_air_key", "get_geo_key"}, splits=["train", "dev", "test"])
    assert set(res) == {"dev_vs_train", "test_vs_train"}
    assert res["dev_vs_train"]["eval_tasks"] == 0
    o = res["test_vs_train"]
    print(o)
    assert o["verbatim_query_leakage"]["leaked"] == 1 and o["verbatim_query_leakage"]["of"] == 3
    assert o["tool_universe_overlap"] == {"shared": 2, "of": 4, "rate": 0.5}
    assert o["held_out_platforms"] == {"unseen": 1, "of": 2, "platforms": ["p-geo"]}
    assert o["tasks_only_unseen_functions"] == {"n": 1, "of": 3, "rate": 0.3333}
    assert o["mean_function_coverage"] == 0.5
    fp = o["function_pair"]
    assert (fp["eval"], fp["train"], fp["eval_unique"], fp["train_unique"]) == (3, 2, 3, 2)
    assert fp["jaccard"] == 0.25 and fp["unseen"] == 0.6667
    adj = o["adjacency"]
    assert (adj["eval"], adj["train"]) == (4, 3)
    assert adj["jaccard"] == 0.25 and adj["unseen"] == 0.75


def test_key_acquisition_edges_excluded():
    t = make_task("d", "q", [["A"], ["B"]], junctions=[("get_air_key", "A"), ("A", "B")])
    # the task declares its key tool in system_state; no edge touches it at either resolution
    assert structure.dependency_edges(t) == [("A", "B")]
    groups = structure.task_groups(t)
    assert groups == [["A"], ["B"]]
    assert structure.adjacency_edges(groups) == [("A", "B")]
    # without the declaration the inventory's key tools do the same
    bare = {**t, "system_state": {}}
    assert structure.adjacency_edges(structure.task_groups(bare, {"get_air_key"})) == [("A", "B")]
    assert ("get_air_key", "A") in structure.adjacency_edges(structure.task_groups(bare))


def test_signatures():
    assert structure.signature([["A"], ["B", "B", "B"], ["B"], ["C", "A"]]) == "A>B>A|C"
    assert structure.signature(structure.groups_from_tools(["A", {"name": "B"}, ["C", "A"]])) == "A>B>A|C"
    assert structure.signature(structure.groups_from_tools(["get_air_key", "A"], {"get_air_key"})) == "A"


def test_a_refusal_keeps_the_structure_of_its_unrestricted_question():
    # s12: a refusal publishes no golden call; a benchmark paraphrase of its question (matched with the tool
    # sequence) must still collide, so its structure is the unrestricted path's (policy.unrestricted)
    t = make_task("d", "q", [["A"], ["B"]])
    refusal = {**t, "golden_actions": [],
               "policy": {"category": "changes_answer", "unrestricted": {"golden_actions": t["golden_actions"]}}}  # fmt: skip
    assert structure.task_signature(refusal) == structure.task_signature(t) != ""
    assert structure.task_signature({**t, "golden_actions": []}) == ""
