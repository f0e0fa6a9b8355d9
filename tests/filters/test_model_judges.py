"""Two-judge agreement with a real model: SmolLM2-135M behind llama.cpp's OpenAI-compatible server
(started by the factory itself) judges answer leakage next to the rules judge. Whatever the weak model
answers, the cascade's decision must follow the agreement rule and record both judges."""

from pathlib import Path

from factory.config import load_config
from factory.filters.cascade import judge_tasks
from factory.llm.service import LLM
from factory.model_config import LocalBackendConfig, ModelsConfig
from tests.conftest import free_port
from tests.filters import samples


def test_rules_and_real_model_judges_agree_or_keep(tmp_path: Path):
    models = ModelsConfig(
        backends={"local": LocalBackendConfig(port=free_port(), max_tokens=96, max_connection_retries=0)},
        roles={"judge_answer_leakage": "local"},
        max_retries=0,  # an invalid reply abstains at once (the rules fallback is no independent judge)
        cache={"path": str(tmp_path / "llm.sqlite")},
    )
    base = load_config()
    cfg = base.model_copy(
        update={
            "models": models,
            "filters": base.filters.model_copy(
                update={"replay": False, "perturb_intermediate": False, "agent_resolve": False}
            ),
        }
    )
    leak = samples.task(query="How many albums did Queen (artist 51) release?")
    clean = samples.task(query="How many albums did the band ABBA release overall?", artist="ABBA", artist_id=7)
    llm = LLM(models, state_dir=tmp_path / "srv")
    try:
        value, meta = judge_tasks(
            samples.DOMAIN,
            [leak, clean],
            {"trajectories": [samples.trajectory()]},
            samples.inventories(),
            cfg,
            llm,
            samples.NoExecutor(),
            lambda m: None,
        )
        assert llm.accounting.total().model_calls == 2  # one model judgement per task, through the server
    finally:
        llm.close()
    assert meta["model_judges"]["answer_leakage"] is True
    rows = {t["id"]: (t, None) for t in value["kept"]} | {r["task"]["id"]: (r["task"], r) for r in value["rejected"]}
    for task, rule_defect in ((leak, True), (clean, False)):
        judged, rejection = rows[task["id"]]
        vs = [v for v in judged["lineage"]["verdicts"] if v["check"] == "answer_leakage"]
        rules_v = next(v for v in vs if v["judge"] == "rules")
        model_v = next(v for v in vs if v["judge"].startswith("model:local/"))
        assert rules_v["passed"] is (not rule_defect)
        model_defect = not model_v["passed"] and not model_v["detail"].startswith("abstained")
        if model_v["detail"].startswith("abstained"):  # an invalid reply: the rules judge decides alone
            expect_removed = rule_defect
        else:
            expect_removed = rule_defect and model_defect
        removed = rejection is not None and rejection["reason"] == "answer_leakage"
        assert removed is expect_removed, (task["query"], vs)
        for v in (rules_v, model_v):
            found = not v["passed"] and not v["detail"].startswith("abstained")
            assert v["action"] == ("reject" if removed and found else "keep" if found else "none"), v
