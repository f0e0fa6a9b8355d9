"""Which tasks `factory eval` evaluates: the hop-type filter (`--hop-types`, `evaluation.hop_types`, issue 17) beside
the split and domain filters; a task without a hop type is API; an unknown hop type is an error, not an empty run."""

import pytest

from factory.config import load_config
from factory.eval.harness import EvalError, EvalSettings, select_tasks
from factory.records import Task


def _task(i: int, hop: str | None, split: str = "test", domain: str = "music") -> Task:
    return Task.model_construct(id=f"sha256:{i:04d}", domain=domain, split=split, hop_type=hop, category="SEQ")


TASKS = [
    _task(1, None),
    _task(2, "API"),
    _task(3, "RAG"),
    _task(4, "API-RAG"),
    _task(5, "RAG-API", domain="korea"),
    _task(6, "API-RAG-API"),
    _task(7, "RAG-API", split="train"),
]
MULTI = ["RAG", "API-RAG", "RAG-API", "API-RAG-API"]


def _select(**overrides):
    settings = EvalSettings.resolve(load_config(), backend=None, **overrides)
    return select_tasks(TASKS, settings)


def test_hop_types_select_the_multi_source_tasks_of_the_split():
    chosen, info = _select(split="test", hop_types=MULTI)
    assert sorted(t.id for t in chosen) == ["sha256:0003", "sha256:0004", "sha256:0005", "sha256:0006"]
    assert info["selected"] == 4 and info["split_applied"]
    api, _ = _select(split="test", hop_types=["API"])  # a task without a hop type is API
    assert sorted(t.id for t in api) == ["sha256:0001", "sha256:0002"]
    everything, _ = _select(split="all")
    assert len(everything) == len(TASKS)
    both, _ = _select(split="test", hop_types=["RAG-API"], domains=["korea"], max_tasks=5)
    assert [t.id for t in both] == ["sha256:0005"]


def test_an_unknown_or_absent_hop_type_is_an_error():
    with pytest.raises(EvalError, match="unknown hop type.*API\\+RAG: a hop type is API, RAG or"):
        _select(hop_types=["API+RAG"])
    # a longer chain is a hop type (main's API-API-RAG, RAG-API-API, ...): absent here, a named error, not a crash
    with pytest.raises(EvalError, match="no tasks of hop type.*API-API-RAG; hop types present"):
        _select(hop_types=["API-API-RAG"])
    with pytest.raises(EvalError, match="no tasks of hop type.*API-RAG-API; hop types present: API, RAG-API"):
        select_tasks([TASKS[0], TASKS[4]], EvalSettings.resolve(load_config(), hop_types=["API-RAG-API"]))


def test_the_cli_flag_reaches_the_settings(capsys):
    from factory.cli import main

    assert main(["eval", "--hop-types", "RAG, API-RAG,rag", "--split", "test"]) == 2
    assert "unknown hop type(s) rag: a hop type is" in capsys.readouterr().err
