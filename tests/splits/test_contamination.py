"""Benchmark files: accepted keys, bad input with file and line, the reverse-filter API."""

import json

import pytest

from factory.config import SplitsConfig
from factory.splits.contamination import BenchmarkError, BenchmarkIndex
from tests.splits.helpers import make_task

CFG = SplitsConfig()


def write(tmp_path, name, lines):
    p = tmp_path / name
    p.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in lines),
        encoding="utf-8",
    )
    return str(p)


def test_accepted_keys_and_reverse_filter(tmp_path):
    p = write(
        tmp_path,
        "bench.jsonl",
        [
            {"id": "b1", "query": "How many flights did Delta operate out of JFK on 2013-01-05?"},
            {
                "id": 2,
                "question": "Which aircraft model has the most seats in the fleet of United?",
                "tools": ["find_airline", "list_planes"],
            },
            "",
            {"question": "What is the weather at LGA at noon?", "tool_sequence": [{"name": "get_weather"}]},
        ],
    )
    idx = BenchmarkIndex.load([p], CFG)
    assert [r.id for r in idx.rows] == ["b1", "2", f"{p}:4"]
    assert idx.rows[1].structure == "find_airline>list_planes"
    assert idx.files[0]["rows"] == 3 and idx.files[0]["with_tools"] == 2
    # near copy: caught by text alone
    c = idx.collisions("how many flights did Delta operate out of JFK on 2013-01-05 ?")
    assert [(x.benchmark_id, x.kind) for x in c] == [("b1", "near_duplicate")]
    # light paraphrase: caught only with the same tool sequence (structural rule)
    para = "Which aircraft type has the most seats in the fleet of United?"  # Jaccard 0.742
    assert idx.collisions(para) == []
    hit = idx.collisions(para, tools=["find_airline", "list_planes"])
    assert [(x.benchmark_id, x.kind) for x in hit] == [("2", "structural_duplicate")]
    assert (
        idx.collisions("Unrelated: list the tracks of an album by AC/DC", tools=["find_airline", "list_planes"]) == []
    )
    # a Task dict: its golden actions give the tool sequence (key acquisition removed)
    t = make_task("aviation", para, [["find_airline"], ["list_planes"]])
    assert [x.benchmark_id for x in idx.collisions_for_task(t)] == ["2"]


def test_empty_index_never_collides():
    idx = BenchmarkIndex.load([], CFG)
    assert len(idx) == 0 and idx.collisions("anything") == []


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([], r"empty\.jsonl: benchmark file is empty"),
        (["", "   "], r"empty\.jsonl: benchmark file is empty"),
        ([{"query": "ok"}, "{not json"], r"empty\.jsonl:2: not valid JSON"),
        (
            [{"query": "ok"}, {"id": 3, "text": "no query"}],
            r"empty\.jsonl:2: no query text: none of the keys 'query', 'question'",
        ),
        ([{"query": ""}], r"empty\.jsonl:1: 'query' must be a non-empty string"),
        ([["a", "list"]], r"empty\.jsonl:1: expected a JSON object"),
        (
            [{"id": "x", "query": "a"}, {"id": "x", "query": "b"}],
            r"empty\.jsonl:2: duplicate id 'x' \(first at line 1\)",
        ),
        ([{"query": "a", "tools": "find_airline"}], r"empty\.jsonl:1: 'tools': a tool sequence must be a list"),
        ([{"query": "a", "tools": [3]}], r"empty\.jsonl:1: 'tools': cannot read a tool name"),
    ],
)
def test_bad_benchmark_files(tmp_path, lines, message):
    p = write(tmp_path, "empty.jsonl", lines)
    with pytest.raises(BenchmarkError, match=message):
        BenchmarkIndex.load([p], CFG)


def test_missing_and_twice_listed(tmp_path):
    with pytest.raises(BenchmarkError, match="nope.jsonl: benchmark file not found"):
        BenchmarkIndex.load([str(tmp_path / "nope.jsonl")], CFG)
    p = write(tmp_path, "b.jsonl", [{"query": "a question"}])
    with pytest.raises(BenchmarkError, match="listed twice"):
        BenchmarkIndex.load([p, p], CFG)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes('{"query": "caf\xe9"}\n'.encode("latin-1"))
    with pytest.raises(BenchmarkError, match="latin1.jsonl: not UTF-8"):
        BenchmarkIndex.load([str(bad)], CFG)


def test_other_language_benchmark_has_no_false_collisions(tmp_path):
    ko = write(
        tmp_path,
        "ko.jsonl",
        [
            {
                "id": "k1",
                "query": "2013년 1월 5일 JFK에서 출발한 델타 항공편은 몇 편인가요?",
                "tools": ["find_airline", "list_flights"],
            },
            {
                "id": "k2",
                "query": "유나이티드 항공 기단에서 좌석이 가장 많은 기종은?",
                "tools": ["find_airline", "list_planes"],
            },
        ],
    )
    idx = BenchmarkIndex.load([ko], CFG)
    assert idx.files[0]["languages"] == {"ko": 2}
    # the English versions, with the very same tool sequences: no collision across languages
    assert idx.collisions("How many Delta flights departed JFK on 2013-01-05?", ["find_airline", "list_flights"]) == []
    assert idx.collisions("Which model has the most seats in United's fleet?", ["find_airline", "list_planes"]) == []
