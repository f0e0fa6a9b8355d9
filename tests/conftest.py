"""Shared fixtures: a project config pointing at a private demo service and data folder."""

import socket
from pathlib import Path

import yaml

from factory.config import load_config


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(tmp: Path, *, domains: list[dict] | None = None, search_tools: bool = False, **overrides) -> Path:
    """The project's factory.yaml with its own demo port, data folder and caches under `tmp`, and
    the project's reviewed value-type and lexicon files (types/, lexicon/) beside it."""
    import shutil

    project = load_config()
    data = project.model_dump(mode="json", exclude_none=True)
    for reviewed in ("types", "lexicon"):  # reviewed value types and tool lexicon files
        if (project.project_dir / reviewed).is_dir() and not (tmp / reviewed).exists():
            shutil.copytree(project.project_dir / reviewed, tmp / reviewed)
    data["data_dir"] = str(tmp / "data")
    data["demo"]["port"] = overrides.pop("port", None) or free_port()
    data["models"]["cache"]["path"] = str(tmp / "cache" / "llm.sqlite")
    data["models"]["embeddings"]["cache_path"] = str(tmp / "cache" / "embeddings.sqlite")
    # the project ranks English questions with the embedded model (a llama.cpp server per session); tests
    # that are not about fluency keep the first grounded variant (tests/synthesis/test_fluency.py,
    # tests/llm/test_fluency_scorer.py map the role themselves)
    data["models"]["roles"]["fluency_scorer.en"] = "rules"
    # retrieval corpora: a few documents per demo corpus keep the pipeline tests' embedding work small
    data["retrieval"]["max_documents_per_source"] = 25
    # the demo gives tasks tool-use policies (VAKRA's shares); tests that are not about policies keep the library
    # default (none), so their answers and exports stay the gold ones (tests/retrieval/test_policy_* set their own)
    data["retrieval"].pop("policy_shares", None)
    # the demo caps one tool's share of a domain's trajectories (a share of a 70-trajectory quota); the small test
    # worlds (per_pattern 2 to 4) keep the library default (no cap): tests/synthesis/test_yield.py tests the cap
    data["synthesis"].pop("max_tool_share", None)
    if domains is not None:
        data["domains"] = domains
    for d in data["domains"]:
        # the search tool needs retrieval_synthesis_index first: only tests that build it have it (the demo's
        # factory.yaml lists one per domain; a test asks for them with search_tools=True)
        d["sources"] = [s for s in d.get("sources") or [] if s.get("kind") != "retrieval"]
        collection = (d.get("retrieval") or {}).get("collection")
        if search_tools and collection:
            d["sources"].append({"kind": "retrieval", "collection": collection})
    for k, v in overrides.items():
        data[k] = v
    path = tmp / "factory.yaml"
    path.write_text(yaml.safe_dump(data, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def pytest_configure(config):
    """Tests never touch the project's Dagster instance: DAGSTER_HOME is a fresh temp folder."""
    import os
    import tempfile

    home = tempfile.mkdtemp(prefix="dagster-home-")
    with open(os.path.join(home, "dagster.yaml"), "w") as f:
        f.write("telemetry:\n  enabled: false\n")
    os.environ["DAGSTER_HOME"] = home


# --------------------------------------------------------------------------- a synthesized demo world

SYNTH_ASSETS = [
    "tool_lexicon",
    "skeleton_graph",
    "connectivity_graph",
    "knowledge_graph",
    "trajectories",
    "generated_queries",
]


class SynthWorld:
    """Every demo domain ingested and synthesized up to generated_queries, demo service running.

    Later-stage tests read `load(asset, domain)` and materialize their own assets on top with
    `materialize([...], domain)`; they must leave the demo service as they found it (POST
    /_admin/reset after planting faults or data changes).
    """

    def __init__(self, cfg, path, tmp, defs, instance):
        self.cfg, self.path, self.tmp, self.defs, self.instance = cfg, path, tmp, defs, instance
        self.data_dir = tmp / "data"
        self.results: dict[str, object] = {}  # domain → result of its synthesis run (skeleton → generated_queries)

    def load(self, asset: str, domain: str | None = None):
        from factory.io import read_artifact

        return read_artifact(self.cfg, asset, domain)

    def materialize(self, assets: list[str], domain: str | None = None, run_config: dict | None = None):
        import dagster as dg

        job = self.defs.resolve_implicit_global_asset_job_def()
        return job.execute_in_process(
            partition_key=domain,
            instance=self.instance,
            asset_selection=[dg.AssetKey(a) for a in assets],
            raise_on_error=False,
            run_config=run_config,
        )


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def synth_world(tmp_path_factory):
    """Small-graph synthesis of all demo domains, once per session (about 1-2 minutes)."""
    import dagster as dg

    from factory.definitions import build_definitions
    from factory.demo.service import DemoService
    from sensors.partitions import sync_domain_partitions

    tmp = tmp_path_factory.mktemp("synth_world")
    base = load_config().model_dump(mode="json")
    graph = {**base["graph"], "iterations": 3, "paths_per_iteration": 20, "eval_trials_per_edge": 0}
    synthesis = {**base["synthesis"], "per_pattern": 2, "attempts": 100}
    path = write_config(tmp, graph=graph, synthesis=synthesis)
    cfg = load_config(path)
    defs = build_definitions(str(path))
    with dg.instance_for_test() as instance, DemoService(cfg.demo, log_dir=tmp / "logs"):
        sync_domain_partitions(instance, cfg.domain_names)
        world = SynthWorld(cfg, path, tmp, defs, instance)
        for d in cfg.domain_names:
            res = world.materialize(["tool_inventory", "tool_probes"], d)
            assert res.success, f"ingestion {d} failed"
        assert world.materialize(["tool_catalog"]).success, "tool_catalog failed"
        for d in cfg.domain_names:
            res = world.materialize(SYNTH_ASSETS, d)
            assert res.success, f"synthesis {d} failed"
            world.results[d] = res
        yield world
