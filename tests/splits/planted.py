"""A planted benchmark for the contamination audit: near copies and light paraphrases of some
generated tasks, plus unrelated queries (some in another language, some with the very tool
sequences of dataset tasks)."""

import json
from pathlib import Path
from typing import Any

from factory.splits import minhash, structure

EN_PREFIX = "Quick question -"
KO_PREFIX = "하나 여쭤볼게요 -"
EN_SWAPS = [
    ("what is", "give me"),
    ("number", "count"),
    ("tell me", "let me know"),
    ("find", "get"),
    ("?", ". thanks."),
]
KO_SWAPS = [
    ("알려 주세요", "알려줘"),
    ("무엇인가요", "뭔가요"),
    ("건수", "개수"),
    ("어떻게 되나요", "얼마죠"),
    ("?", " 부탁해요."),
]

UNRELATED_EN = [
    "What is the boiling point of water at the top of Mount Everest?",
    "Recommend three novels similar to The Name of the Rose.",
    "How do I convert a pandas DataFrame to a list of dictionaries?",
    "Which planet in the solar system has the most moons right now?",
    "Give me a recipe for a vegetarian lasagna for six people.",
    "How many calories does a 30 minute swim burn for an adult?",
    "What year did the Berlin Wall fall, and why?",
    "Translate 'good morning' into Portuguese and Japanese.",
    "What is the difference between a virus and a bacterium?",
    "Plan a two-day walking tour of Lisbon for a first-time visitor.",
    "Which programming language should a beginner learn first?",
    "How long should I rest a steak after grilling it?",
    "What are the rules of the offside position in football?",
    "Summarize the causes of the French Revolution in three points.",
    "How many bones does an adult human skeleton have?",
    "Write a short haiku about autumn rain.",
    "What is the tallest building in South America?",
    "Explain compound interest with a simple example.",
    "Which vitamins are found in spinach?",
    "What is the capital of Australia and its population?",
]
UNRELATED_KO = [
    "서울에서 부산까지 KTX로 몇 시간 걸리나요?",
    "김치찌개 맛있게 끓이는 방법을 알려 주세요.",
    "조선 시대에 한글을 만든 왕은 누구인가요?",
    "제주도 3박 4일 여행 일정을 추천해 주세요.",
    "비 오는 날 듣기 좋은 노래를 추천해 줄래요?",
    "한국의 최고봉은 어디이고 높이는 얼마인가요?",
    "겨울철 감기 예방법을 세 가지 알려 주세요.",
    "파이썬에서 리스트를 정렬하는 방법은 무엇인가요?",
    "항공편 지연 시 보상 규정은 어떻게 되나요?",
    "올림픽은 몇 년마다 열리나요?",
]


def _groups(task: dict[str, Any]) -> list[list[str]]:
    return structure.call_groups(task["golden_actions"], set())  # keys kept: the index must drop them itself


def _replace_prefix(q: str, prefix: str) -> str:
    for sep in (":", "?", "."):
        i = q.find(sep)
        if 0 < i < 30:
            return f"{prefix} {q[i + 1 :].strip()}"
    return f"{prefix} {q}"


def near_copy(q: str) -> str:
    """Case, spacing and trailing punctuation changed; Jaccard stays ≥ 0.85."""
    s = q.rstrip("?. ").lower().replace(" ", "  ")
    return s + " ?"


def paraphrase(q: str, lang: str) -> str | None:
    """A new opening clause and a few word swaps, applied until the Jaccard drops below 0.85;
    None when it does not land in [0.62, 0.85)."""
    s = _replace_prefix(q, KO_PREFIX if lang == "ko" else EN_PREFIX)
    for a, b in KO_SWAPS if lang == "ko" else EN_SWAPS:
        if minhash.text_jaccard(q, s) < 0.85:
            break
        s = s.replace(a, b, 1)
    j = minhash.text_jaccard(q, s)
    return s if 0.62 <= j < 0.85 else None


def plant(tasks: list[dict[str, Any]], path: Path, every: int = 3) -> dict[str, Any]:
    """Write the planted benchmark; returns {row id: target task id} for planted rows and the unrelated ids."""
    rows, targets, kinds = [], {}, {}
    for n, t in enumerate(sorted(tasks, key=lambda t: t["id"])):
        if n % every:
            continue
        rid = f"planted-{n:03d}"
        if (n // every) % 2 == 0:
            rows.append({"id": rid, "query": near_copy(t["query"])})
            kinds[rid] = "near_copy"
        else:
            p = paraphrase(t["query"], t["language"])
            if p is None:
                continue
            rows.append({"id": rid, "question": p, "tools": _groups(t)})
            kinds[rid] = "paraphrase"
        targets[rid] = t["id"]
    tool_seqs = [_groups(t) for t in sorted(tasks, key=lambda t: t["id"])]
    unrelated = []
    for i, q in enumerate(UNRELATED_EN + UNRELATED_KO):
        rid = f"unrelated-{i:03d}"
        row: dict[str, Any] = {"id": rid, "query": q}
        if i % 2 == 0 and tool_seqs:  # the very tool sequence of a dataset task, unrelated text
            row["tools"] = tool_seqs[i % len(tool_seqs)]
        rows.append(row)
        unrelated.append(rid)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    sims = {
        rid: minhash.text_jaccard(
            next(r.get("query") or r.get("question") for r in rows if r["id"] == rid),
            next(t["query"] for t in tasks if t["id"] == tid),
        )
        for rid, tid in targets.items()
    }
    return {"targets": targets, "kinds": kinds, "unrelated": unrelated, "similarity": sims, "rows": rows}
