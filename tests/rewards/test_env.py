"""The live tools as an RL environment against the demo service: typed, documented, key-free callables; an
episode of two chained calls; per-episode state; the verl tool over the same sessions."""

import asyncio
import inspect
import json

import pytest

from factory.rewards import outcome_reward
from factory.rewards.env import ToolEnvironment, ToolEnvironmentError, session_of
from factory.rewards.verl import FactoryVerlTool, verl_tool_config
from factory.tools.registry import ToolRegistry
from tests.export.helpers import KEY_RE, inventories

STORE = "chinook-store"


@pytest.fixture(scope="module")
def env(synth_world):
    e = ToolEnvironment(synth_world.cfg, ToolRegistry.from_inventories(inventories(synth_world)))
    yield e
    e.close()


def test_functions_are_typed_documented_and_key_free(env) -> None:
    from transformers.utils import get_json_schema

    tools = env.tools()
    names = [f.__name__ for f in tools]
    assert len(names) == len(set(names)) and "get_chinook_store_key" not in names  # key tools are system state
    for f in tools:
        schema = get_json_schema(f)  # what TRL's tools= reads: raises on a missing type or Args entry
        text = json.dumps(schema) + (f.__doc__ or "")
        assert "api_key" not in text and "serviceKey" not in text, f.__name__
    albums = get_json_schema(next(f for f in tools if f.__name__ == "list_artist_albums"))["function"]
    assert albums["parameters"]["properties"]["artist_id"]["type"] == "integer"
    assert albums["parameters"]["required"] == ["artist_id"]
    assert (
        inspect.signature(next(f for f in tools if f.__name__ == "list_artist_albums")).parameters["page"].default
        is None
    )


def test_an_episode_chains_two_calls_and_keeps_its_own_state(env) -> None:
    factory = env.environment_factory()
    public = [n for n, _ in inspect.getmembers(factory, predicate=inspect.isfunction) if not n.startswith("_")]
    assert "reset" in public and set(public) - {"reset"} == {b.name for b in env.bindings}
    a, b = factory(), factory()
    row = {"ground_truth": json.dumps({"golden_actions": [{"platform": "chinook-catalog"}, {"platform": STORE}]})}
    a.reset(**row)
    b.reset(**row)
    found = json.loads(a.search_artists(name="AC/DC"))
    artist = found["records"][0]["artist_id"]
    albums = json.loads(a.list_artist_albums(artist_id=artist))  # the second call takes the first one's value
    assert albums["record_count"] >= 1 and {r["artist_id"] for r in albums["records"]} == {artist}
    calls = session_of(a).calls
    assert [(c["tool"], c["status"], c["ok"]) for c in calls] == [
        ("search_artists", "executed", True),
        ("list_artist_albums", "executed", True),
    ]
    assert not KEY_RE.search(json.dumps(found) + json.dumps(albums))
    bad = json.loads(a.list_artist_albums(artist_id="AC/DC"))  # schema-checked before it is sent
    assert "invalid arguments" in bad["error"] and session_of(a).calls[-1]["status"] == "bad_arguments"
    # a state change stays in its episode: b's store is untouched, a fresh reset starts clean
    before = session_of(b).state_hashes([STORE])[STORE]
    assert json.loads(a.create_playlist(name="rl episode"))["record_count"] == 1
    after = session_of(a).state_hashes([STORE])[STORE]
    assert before and after and after != before and session_of(b).state_hashes([STORE])[STORE] == before
    gt = {"question": "q", "answer": {"value": 1, "text": "1"}, "answer_type": "number", "golden_actions": [],
          "reward_basis": ["ENVIRONMENT"], "expected_state_hash": {STORE: after}}  # fmt: skip
    assert outcome_reward(["done", "done"], ground_truth=[gt, gt], environments=[a, b]) == [1.0, 0.0]
    a.reset(**row)
    assert session_of(a).calls == [] and session_of(a).state_hashes([STORE])[STORE] == before
    with pytest.raises(TypeError, match="unexpected argument"):
        a.search_artists(name="x", api_key="k")


def test_verl_tools_share_one_session_per_trajectory(env, synth_world, monkeypatch) -> None:
    monkeypatch.setenv("FACTORY_CONFIG", str(synth_world.path))
    config = verl_tool_config([env.binding("search_artists"), env.binding("list_artist_albums")])
    assert [t["tool_schema"]["function"]["name"] for t in config["tools"]] == ["search_artists", "list_artist_albums"]
    assert "api_key" not in json.dumps(config)
    search, albums = (FactoryVerlTool(t["config"], t["tool_schema"]) for t in config["tools"])

    async def trajectory() -> tuple[str, str]:
        iid = await search.create("traj-1")
        await albums.create(iid)
        found, _, metrics = await search.execute(iid, {"name": "AC/DC"})
        text = found["text"] if isinstance(found, dict) else found.text
        artist = json.loads(text)["records"][0]["artist_id"]
        listed, _, _ = await albums.execute(iid, {"artist_id": artist, "page": None})
        await search.release(iid)
        await albums.release(iid)
        return text, listed["text"] if isinstance(listed, dict) else listed.text

    found, listed = asyncio.run(trajectory())
    assert json.loads(listed)["record_count"] >= 1 and not KEY_RE.search(found + listed)
    with pytest.raises(ToolEnvironmentError, match="no tool 'nope'"):
        env.binding("nope")
