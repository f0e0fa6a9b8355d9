"""The export core against the real demo service: every golden action re-executed and digest-checked, every
file read back (JSONL parsed and validated, Parquet loaded with Hugging Face `datasets`, RL rows, benchmark
Task records), no key anywhere, mismatches dropped, failures publish nothing."""

import json
from pathlib import Path

import pytest
import yaml

from factory.export import build
from factory.export.formats import validate_chat, validate_rl
from factory.export.publish import POINTER, ExportError
from factory.io import Store
from factory.records import Task, published_task
from tests.export.helpers import KEY_RE, export_files, fake_splits, inventories, make_executor, read_jsonl


def _export(world, tmp_path, splits=None, **exports):
    cfg = world.cfg.model_copy(update={"exports": world.cfg.exports.model_copy(update=exports)})
    trajs = {d: world.load("trajectories", d) for d in cfg.domain_names} if exports.get("tool_results") else None
    return build.build_exports(
        splits or fake_splits(world),
        inventories(world),
        trajs,
        cfg,
        make_executor=make_executor(world),
        store=Store(tmp_path / "data"),
        progress=lambda m: None,
    )


@pytest.fixture(scope="module")
def exported(synth_world, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export_core")
    manifest, meta = _export(synth_world, tmp)
    return manifest, meta, tmp


def test_every_call_replayed_and_verified(synth_world, exported):
    manifest, meta, _ = exported
    splits = fake_splits(synth_world)
    n_calls = sum(len(t["golden_actions"]) for t in splits["tasks"])
    assert manifest["dropped"] == [] and manifest["flagged"] == []
    assert manifest["tasks"] == len(splits["tasks"]) > 0
    assert meta["replay/calls re-executed and verified"] == n_calls
    assert meta["replay/result digest mismatches"] == 0
    assert set(manifest["splits"]) == {"train", "dev", "test"}
    for fmt in ("openai_chat", "hf_parquet", "rl", "rl_parquet", "benchmark"):
        assert sum(e["rows"] for e in manifest[fmt].values()) == manifest["tasks"], fmt
    assert "preview" in meta and "assistant →" in meta["preview"]


def test_chat_rows_parse_back_and_pair_every_call(synth_world, exported):
    manifest, _, _ = exported
    by_id = {t["id"]: t for t in fake_splits(synth_world)["tasks"]}
    truncated = 0
    for split, e in manifest["openai_chat"].items():
        rows = read_jsonl(e["path"])
        assert len(rows) == e["rows"]
        for row in rows:
            assert validate_chat(row) == [], row["id"]
            task = by_id[row["id"]]
            names = {t["function"]["name"] for t in row["tools"]}
            msgs = row["messages"]
            assert msgs[0]["role"] == "system" and task["system_state"]["current_date"] in msgs[0]["content"]
            assert msgs[1] == {"role": "user", "content": task["query"]}
            assert msgs[-1] == {"role": "assistant", "content": task["answer"]["text"]}
            calls = [c for m in msgs if m["role"] == "assistant" for c in m.get("tool_calls") or []]
            answers = [m for m in msgs if m["role"] == "tool"]
            assert sorted(c["id"] for c in calls) == sorted(m["tool_call_id"] for m in answers)  # one answer each
            assert all(c["function"]["name"] in names for c in calls)
            # parallel calls of one step share one assistant message, in golden order
            steps = sorted({a["step"] for a in task["golden_actions"]})
            groups = [m["tool_calls"] for m in msgs if m["role"] == "assistant" and m.get("tool_calls")]
            assert [len(g) for g in groups] == [sum(a["step"] == s for a in task["golden_actions"]) for s in steps]
            assert [json.loads(c["function"]["arguments"]) for c in calls] == [
                a["args"] for a in task["golden_actions"]
            ]
            for m, a in zip(answers, task["golden_actions"], strict=True):
                body = json.loads(m["content"])
                shown = len(body["records"])
                assert shown == min(a["records"], 20) or "truncated" in body
                if a["total_count"] is not None:
                    assert body["total_count"] == a["total_count"]
                truncated += "truncated" in body
            assert row["metadata"]["split"] == split
    assert truncated > 0  # the demo has calls with more than 20 records: the cap and its marker are exercised


def test_parquet_loads_with_hf_datasets(exported, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    import datasets

    manifest, _, _ = exported
    files = {s: e["path"] for s, e in manifest["hf_parquet"].items()}
    ds = datasets.load_dataset("parquet", data_files=files, cache_dir=str(tmp_path / "hf"))
    assert {s: ds[s].num_rows for s in ds} == {s: e["rows"] for s, e in manifest["hf_parquet"].items()}
    row = ds["train"][0]
    assert row["messages"][0]["role"] == "system" and json.loads(row["tools"])
    msgs = [{k: v for k, v in m.items() if v is not None and not (k == "tool_calls" and not v)}
            for m in row["messages"]]  # fmt: skip
    assert validate_chat({"messages": msgs, "tools": json.loads(row["tools"])}) == []
    rl = datasets.load_dataset(
        "parquet", data_files={s: e["path"] for s, e in manifest["rl_parquet"].items()}, cache_dir=str(tmp_path / "hf")
    )
    r = rl["train"][0]
    assert [m["role"] for m in r["prompt"]] == ["system", "user"]
    assert json.loads(r["reward_model"]["ground_truth"]) == json.loads(r["ground_truth"])


def test_rl_and_benchmark_rows(synth_world, exported):
    manifest, _, _ = exported
    by_id = {t["id"]: t for t in fake_splits(synth_world)["tasks"]}
    for split, e in manifest["rl"].items():
        for row in read_jsonl(e["path"]):
            assert validate_rl(row) == []
            gt, task = row["ground_truth"], by_id[row["id"]]
            assert gt["answer"]["value"] == task["answer"]["value"] and gt["answer_type"] == task["answer"]["type"]
            assert gt["max_allowed_calls"] == task["max_allowed_calls"]
            assert [g["call_digest"] for g in gt["golden_actions"]] == [
                a["call_digest"] for a in task["golden_actions"]
            ]
            assert row["extra_info"]["split"] == split
    for split, e in manifest["benchmark"].items():
        doc = json.loads(Path(e["path"]).read_text(encoding="utf-8"))
        assert doc["split"] == split and doc["count"] == len(doc["tasks"]) == e["rows"]
        for t in doc["tasks"]:
            assert Task.model_validate(t).split == split
            assert t == published_task(by_id[t["id"]])  # the task record, less per-run lineage (run id)


def test_card_and_no_keys_anywhere(exported):
    manifest, _, _ = exported
    card = Path(manifest["card"]).read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---")[1])
    assert {c["config_name"] for c in header["configs"]} == {"default", "rl"}
    assert {f["split"] for f in header["configs"][0]["data_files"]} == set(manifest["hf_parquet"])
    for licence in ("CC0-1.0", "MIT", "NGII"):
        assert licence in card
    files = export_files(manifest["root"])
    # 7 files x 3 splits (chat, strict + its sidecar, parquet, rl jsonl + parquet, benchmark) + card, manifest and
    # the verl tool config
    assert len(files) == 24
    for p in files:
        text = p.read_bytes().decode("utf-8", errors="replace")
        assert not KEY_RE.search(text), p
    assert "<KEY>" in Path(manifest["openai_chat"]["train"]["path"]).read_text(encoding="utf-8")


def test_digest_mismatch_dropped_or_flagged(synth_world, tmp_path):
    splits = fake_splits(synth_world, ["music"])
    victim = next(t for t in splits["tasks"] if len(t["golden_actions"]) >= 3)
    victim["golden_actions"][-1]["result_digest"] = "sha256:" + "0" * 64
    manifest, meta = _export(synth_world, tmp_path / "drop", splits)
    assert [d["id"] for d in manifest["dropped"]] == [victim["id"]], manifest["dropped"]
    assert manifest["dropped"][0]["reason"] == "result_digest_mismatch"
    assert meta["dropped_by_reason"] == {"result_digest_mismatch": 1}
    for e in manifest["openai_chat"].values():
        assert victim["id"] not in {r["id"] for r in read_jsonl(e["path"])}
    manifest, _ = _export(synth_world, tmp_path / "flag", splits, on_digest_mismatch="flag")
    assert manifest["dropped"] == [] and [f["id"] for f in manifest["flagged"]] == [victim["id"]]
    row = next(r for r in read_jsonl(manifest["openai_chat"][victim["split"]]["path"]) if r["id"] == victim["id"])
    assert "result_digest_mismatch" in row["metadata"]["flags"]


def test_failed_export_publishes_nothing(synth_world, tmp_path):
    splits = fake_splits(synth_world, ["korea"])
    first, _ = _export(synth_world, tmp_path, splits)
    pointer = (tmp_path / "data" / POINTER).read_text()
    before = sorted(p.name for p in (tmp_path / "data" / "exports").iterdir())
    # a "key pattern" that matches every digest: the read-back scan must refuse to publish
    with pytest.raises(ExportError, match="nothing published"):
        _export(synth_world, tmp_path, splits, secret_patterns=[r"sha256:[0-9a-f]{8}"], max_result_records=3)
    assert (tmp_path / "data" / POINTER).read_text() == pointer
    assert sorted(p.name for p in (tmp_path / "data" / "exports").iterdir()) == before  # no staging, no version
    # the same content again: the same version folder, verified and kept
    again, _ = _export(synth_world, tmp_path, splits)
    assert again["version"] == first["version"]


def test_recorded_mode_and_hidden_keys(synth_world, tmp_path):
    splits = fake_splits(synth_world, ["aviation"])
    manifest, meta = _export(synth_world, tmp_path, splits, tool_results="recorded", key_param="hidden")
    assert manifest["dropped"] == [] and meta["replay/calls from recorded samples"] > 0
    for e in manifest["openai_chat"].values():
        for row in read_jsonl(e["path"]):
            assert validate_chat(row) == []
            assert "results_recorded_sample" in row["metadata"]["flags"]
            for t in row["tools"]:
                props = t["function"]["parameters"]["properties"]
                assert "api_key" not in props and not t["function"]["name"].endswith("_key")
            text = json.dumps(row["messages"])
            assert "<KEY>" not in text and "api_key" not in text


def _racing_task(world, splits, specs):
    """A music task whose step 2 creates two playlists at once (ids race), answered by the first one's count."""
    import asyncio

    from factory.synthesis.execute import call_row
    from factory.tools.spec import ToolSpec

    base = next(t for t in splits["tasks"] if t["domain"] == "music")
    spec = {
        n: ToolSpec.model_validate(specs[("chinook-store", n)]) for n in ("get_chinook_store_key", "create_playlist")
    }

    async def run():
        async with make_executor(world)() as ex:
            key = await ex.call(spec["get_chinook_store_key"], {})
            made = [await ex.call(spec["create_playlist"], {"name": n}) for n in ("Race A", "Race B")]
        return [key, *made]

    results = asyncio.run(run())
    assert all(r.ok for r in results), [r.outcome for r in results]
    actions = [call_row(r, 1 if i == 0 else 2, f"music/chinook-store/{r.tool}") for i, r in enumerate(results)]
    keep = ("step", "tool", "platform", "args", "result_digest", "records", "total_count", "call_digest")
    actions = [{k: a[k] for k in keep} for a in actions]
    spec_ = {"kind": "count", "calls": [{"step": 2, "index": 0}]}
    planted = {
        **base,
        "golden_actions": actions,
        "answer_spec": spec_,
        "answer": {
            **base["answer"],
            "type": "number",
            "value": 1,
            "text": "1",
            "fields": ["total_count"],
            "branch": None,
            "branches": None,
        },
        "alternative_paths": [],
        "expected_state_hash": {},
    }
    splits["tasks"] = [planted if t is base else t for t in splits["tasks"]]
    return planted


def test_parallel_state_changes_are_serialized_to_reproduce_the_record(synth_world, tmp_path, monkeypatch):
    """Two state-changing calls of one step race for ids; the export finds the order that reproduces the stored
    digests (here: planted as the reverse of the golden order) instead of dropping the row."""
    import asyncio

    from factory.export.results import _replay_once
    from factory.tools.executor import ToolExecutor
    from factory.tools.fingerprint import sha256_digest

    async def in_order(self, calls):  # the race made deterministic: parallel calls arrive in golden order
        return [await self.call(t, a) for t, a in calls]

    monkeypatch.setattr(ToolExecutor, "call_many", in_order)

    splits = fake_splits(synth_world, ["music"])
    specs = {(t["platform"], t["name"]): t for t in synth_world.load("tool_inventory", "music")["tools"]}

    def racing_step(task):
        for step in sorted({a["step"] for a in task["golden_actions"]}):
            idx = [i for i, a in enumerate(task["golden_actions"]) if a["step"] == step]
            if sum(bool(specs[(task["golden_actions"][i]["platform"], task["golden_actions"][i]["tool"])].get(
                    "state_changing")) for i in idx) >= 2:  # fmt: skip
                return step, idx
        return None

    task = next((t for t in splits["tasks"] if racing_step(t)), None)
    if task is None:  # synthesis need not draw one: plant two playlists created in one step
        task = _racing_task(synth_world, splits, specs)
    step, idx = racing_step(task)
    reverse = {step: list(reversed(idx))}
    results, _ = asyncio.run(_replay_once(task, make_executor(synth_world), set(), reverse))
    for a, r in zip(task["golden_actions"], results, strict=True):
        a["result_digest"] = sha256_digest([r.records, r.total_count])
    manifest, _ = _export(synth_world, tmp_path / "ok", splits)
    assert manifest["dropped"] == [], manifest["dropped"]
    row = next(r for r in read_jsonl(manifest["openai_chat"][task["split"]]["path"]) if r["id"] == task["id"])
    assert any(f.startswith("parallel_state_changes_serialized") for f in row["metadata"]["flags"])
    tool_msgs = [m for m in row["messages"] if m["role"] == "tool"]
    for i in idx:  # each call's message holds the result of the reproduced (reversed) execution
        assert json.loads(tool_msgs[i]["content"])["records"] == results[i].records[:20]
    manifest, _ = _export(synth_world, tmp_path / "strict", splits, replay_order_attempts=0)
    assert [(d["id"], d["reason"]) for d in manifest["dropped"]] == [(task["id"], "result_digest_mismatch")]
