"""The whole dataset_splits core on hand-built tasks: removals, empty results, bad input, publishing."""

import json
import random

import pytest

from factory.config import SplitsConfig, load_config
from factory.io import Store
from factory.splits import build, publish
from factory.splits.contamination import BenchmarkError
from tests.splits.helpers import inventory, make_task

NOUNS = "flight carrier airport weather delay plane seat tail origin route hour gate runway cargo crew".split()


def world(n: int = 30, seed: int = 0) -> dict[str, list[dict]]:
    rng = random.Random(seed)
    out: dict[str, list[dict]] = {"air": [], "geo": []}
    for d, platform in (("air", "p-air"), ("geo", "p-geo")):
        for i in range(n):
            words = " ".join(f"{rng.choice(NOUNS)}{rng.randint(0, 999)}" for _ in range(9))
            pattern = ["SEQ", "CMP", "SEQ+FAN"][i % 3]
            steps = [[f"{d}_t{i % 4}"], [f"{d}_u{i % 5}"]]
            out[d].append(make_task(d, f"{d} question {i}: {words}?", steps, pattern=pattern, platform=platform))
    return out


def cfg_for(tmp_path, **splits):
    cfg = load_config()
    return cfg.model_copy(update={"data_dir": str(tmp_path / "data"), "splits": SplitsConfig(**splits)})


INV = {"air": inventory("air", ["p-air"]), "geo": inventory("geo", ["p-geo"])}


def run(tasks_by_domain, cfg):
    judged = {d: {"domain": d, "kept": ts, "rejected": [], "counts": {}} for d, ts in tasks_by_domain.items()}
    return build.build_dataset_splits(judged, INV, cfg, run_id="test")


def test_removals_splits_and_files(tmp_path):
    w = world()
    base = w["air"][0]
    # a near copy and a structural duplicate (same tools, a few words changed) of the first task
    near = make_task("air", base["query"].upper() + " ", [["air_t0"], ["air_u0"]], platform="p-air")
    words = base["query"].split()
    struct_q = " ".join(words[:-2] + ["zzz1", "zzz2"])
    struct = make_task("air", struct_q, [["air_t0"], ["air_u0"]], platform="p-air", pattern="CMP")
    w["air"] += [near, struct]
    cfg = cfg_for(tmp_path)
    value, meta = run(w, cfg)
    reasons = {r["id"]: (r["reason"], r["match"]) for r in value["removed"]}
    smallest = min(base["id"], near["id"])
    other = max(base["id"], near["id"])
    assert reasons[other] == ("near_duplicate", smallest)
    assert reasons[struct["id"]][0] in ("structural_duplicate", "near_duplicate")
    assert meta["tasks_in"] == 62 and meta["tasks_out"] == 62 - len(value["removed"])
    assert sum(value["splits"].values()) == len(value["tasks"])
    assert all(t["split"] in {"train", "dev", "test"} for t in value["tasks"])
    store = Store(cfg.data_dir)
    for s, n in value["splits"].items():
        rows = store.read_jsonl(f"dataset_splits/{s}.jsonl")
        assert len(rows) == n and all(r["split"] == s for r in rows)
    assert publish.verify(store, "dataset_splits") == []
    audit = store.read_json("dataset_splits/contamination_audit.json")
    assert audit["status"] == "no_benchmarks" and len(audit["dropped"]) == len(value["removed"])
    assert value["env_lock"] == store.read_json("dataset_splits/env_lock.json")
    df = build.splits_frame(value, cfg)
    assert df[["split_known", "in_split_file", "held_out_ok", "thresholds_ok", "files_consistent"]].all().all()
    assert not df["kept_near_duplicate"].any() and not df["also_removed"].any()
    # same input → same output
    again, _ = run(w, cfg)
    assert [(t["id"], t["split"]) for t in again["tasks"]] == [(t["id"], t["split"]) for t in value["tasks"]]


def test_empty_and_filtered_to_nothing(tmp_path):
    cfg = cfg_for(tmp_path)
    value, meta = run({"air": [], "geo": []}, cfg)
    assert value["tasks"] == [] and meta["empty"] is True
    assert value["splits"] == {"train": 0, "dev": 0, "test": 0}
    store = Store(cfg.data_dir)
    assert store.read_bytes("dataset_splits/train.jsonl") == b""
    assert build.splits_frame(value, cfg).empty
    assert build.check_train_contamination(cfg, value)["passed"]

    # every task collides with the benchmark → a recorded empty result
    w = world(4)
    bench = tmp_path / "bench.jsonl"
    bench.write_text(
        "".join(json.dumps({"id": t["id"][-6:], "query": t["query"]}) + "\n" for ts in w.values() for t in ts)
    )
    cfg = cfg_for(tmp_path, benchmarks=[str(bench)])
    value, meta = run(w, cfg)
    assert value["tasks"] == [] and meta["removed_benchmark_collision"] == 8
    audit = store.read_json("dataset_splits/contamination_audit.json")
    assert audit["colliding_tasks"] == 8 and audit["train_collisions"] == 0 and audit["train_tasks"] == 0
    assert {r["reason"] for r in audit["dropped"]} == {"benchmark_collision"}
    assert build.check_train_contamination(cfg, value)["passed"]


def test_duplicate_and_invalid_tasks(tmp_path):
    cfg = cfg_for(tmp_path)
    w = world(6)
    dup = dict(w["air"][0])
    value, _ = run({"air": w["air"] + [dup], "geo": w["geo"]}, cfg)
    rec = [r for r in value["removed"] if r.get("detail")]
    assert len(rec) == 1 and rec[0]["similarity"] == 1.0 and rec[0]["match"] == dup["id"]
    assert sum(1 for t in value["tasks"] if t["id"] == dup["id"]) == 1
    df = build.splits_frame(value, cfg)
    assert not df["also_removed"].any() and df["in_split_file"].all() and df["id"].is_unique

    clash = {**w["air"][1], "query": "a different query with the same id"}
    with pytest.raises(build.SplitsError, match="used by two different tasks"):
        run({"air": w["air"] + [clash], "geo": []}, cfg)
    broken = {k: v for k, v in w["air"][2].items() if k != "golden_actions"}
    with pytest.raises(build.SplitsError, match=r"judged_queries\[air\]\.kept\[6\] .* not a valid Task"):
        run({"air": w["air"] + [broken]}, cfg)
    with pytest.raises(build.SplitsError, match=r"judged_queries\[air\]: expected a 'kept' list"):
        build.build_dataset_splits({"air": {"tasks": []}}, INV, cfg)


def test_held_out_platforms(tmp_path):
    cfg = cfg_for(tmp_path, held_out_platforms=["p-geo"])
    value, meta = run(world(), cfg)
    geo = [t for t in value["tasks"] if t["domain"] == "geo"]
    assert geo and all(t["split"] == "test" for t in geo)
    assert meta["held_out_tasks"] == len(geo)
    assert value["overlap"]["test_vs_train"]["held_out_platforms"]["platforms"] == ["p-geo"]
    with pytest.raises(build.SplitsError, match="unknown platform"):
        run(world(2), cfg_for(tmp_path, held_out_platforms=["nope"]))


def test_publish_is_all_or_nothing(tmp_path, monkeypatch):
    cfg = cfg_for(tmp_path)
    store = Store(cfg.data_dir)
    run(world(), cfg)
    before = {
        n: store.read_bytes(f"dataset_splits/{n}") for n in ("train.jsonl", "dev.jsonl", "test.jsonl", "manifest.json")
    }

    # a bad benchmark file fails before anything is written
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "fine"}\n{"query": \n')
    with pytest.raises(BenchmarkError, match="bad.jsonl:2"):
        run(world(12, seed=1), cfg_for(tmp_path, benchmarks=[str(bad)]))
    # a failure while staging (disk full...) leaves the previous release untouched
    calls = {"n": 0}
    real = Store.write_bytes

    def flaky(self, rel, data):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError("no space left on device")
        return real(self, rel, data)

    monkeypatch.setattr(Store, "write_bytes", flaky)
    with pytest.raises(OSError, match="no space"):
        run(world(12, seed=1), cfg)
    monkeypatch.undo()
    after = {n: store.read_bytes(f"dataset_splits/{n}") for n in before}
    assert after == before
    assert publish.verify(store, "dataset_splits") == []
    assert not [p for p in (tmp_path / "data" / "dataset_splits").iterdir() if p.name.startswith(".staging")]

    # a split dropped from the config disappears with the next release
    run(world(), cfg_for(tmp_path, ratios={"train": 0.8, "test": 0.2}))
    assert not store.exists("dataset_splits/dev.jsonl")
    assert publish.verify(store, "dataset_splits") == []


def test_unknown_held_out_platform_with_a_nameless_source(tmp_path):
    """A source without `platform` (named from its spec) must not turn the error into a TypeError."""
    cfg = cfg_for(tmp_path, held_out_platforms=["nope"])
    domains = [
        d.model_copy(update={"sources": [s.model_copy(update={"platform": None}) for s in d.sources]})
        for d in cfg.domains
    ]
    cfg = cfg.model_copy(update={"domains": domains})
    with pytest.raises(build.SplitsError, match="unknown platform"):
        run(world(2), cfg)
    assert "p-geo" in build.configured_platforms(cfg, INV) and None not in build.configured_platforms(cfg, INV)


def test_a_paraphrase_with_the_same_answer_sentence_is_one_task_not_one_per_split(tmp_path):
    """Blind read s11 (ko #4/#12): one question asked through two platforms in other words sat in train and in dev;
    MinHash misses the paraphrase, the answer sentence does not. Refusals and short sentences never match."""
    w = world()
    sentence = "15곳 차이입니다(서울특별시 25곳, 인천광역시 10곳)."
    a = make_task("air", "서울특별시는 인천광역시보다 구·군이 몇 곳 더 많나요?", [["air_t1"]], language="ko")
    b = make_task("air", "서울특별시와 인천광역시의 구·군 수는 몇 곳 차이 나나요?", [["air_u2"]], language="ko")
    other = make_task("air", "광주광역시와 인천광역시의 구·군 수는 몇 곳 차이 나나요?", [["air_u3"]], language="ko")
    refusals = [
        make_task("air", f"Which carrier flew route {i} the most in 2013, by how many flights?", [[f"air_t{i}"]])
        for i in (1, 2)
    ]
    for t, text in ((a, sentence), (b, " " + sentence), (other, "5곳 차이입니다(광주광역시 5곳, 인천광역시 10곳).")):
        t["answer"] = {"type": "number", "value": 15, "text": text}
    for t in refusals:
        t["answer"] = {"type": "string", "value": "No permitted tool can answer this question.",
                       "text": "No permitted tool can answer this question."}  # fmt: skip
        t["answer_spec"] = {"kind": "unanswerable", "calls": []}
    w["air"] += [a, b, other, *refusals]
    value, _ = run(w, cfg_for(tmp_path))
    kept = {t["id"] for t in value["tasks"]}
    keep, drop = sorted([a["id"], b["id"]])
    assert keep in kept and drop not in kept
    removed = {r["id"]: r for r in value["removed"]}
    assert removed[drop]["reason"] == "near_duplicate" and removed[drop]["match"] == keep
    assert "same answer sentence" in removed[drop]["detail"] and removed[drop]["similarity"] < 0.85
    assert other["id"] in kept and {t["id"] for t in refusals} <= kept
