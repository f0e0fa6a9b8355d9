"""factory.rewards: TRL reward functions and verl's compute_score on exported ground truths, under the one
answer convention (golden sentences of every pattern score 1, a natural correct sentence scores 1, a wrong
answer 0)."""

import json
from typing import Any

import pytest

from factory.export import formats
from factory.rewards import RewardError, answer_reward, compute_score, final_reply, outcome_reward

# golden answers of demo tasks, one per pattern (query, answer type, value, golden sentence, branch)
GOLDEN = {
    "SEQ": ("Can you count the albums of the artist of track Different World for me?", "number", 21,
            "There are 21 albums of the artist of track Different World.", None),
    "SEQ/ko": ("철마면의 시군구의 읍면동 수를 알려 주세요.", "number", 5, "철마면의 시군구의 읍면동의 수는 5곳입니다.", None),
    "FAN": ("Please look this up for me: across all the matches for invoice id 99, what is the total number of "
            "album's tracks?", "number", 27, "27", None),
    "DRV": ("How many tracks do the albums of the tracks whose file size in bytes is at most 490375760 among the "
            "tracks of the genres whose number of tracks is at most 17 have in total?", "number", 72,
            "There are 72 tracks of the albums of the tracks whose file size in bytes is at most 490375760 among "
            "the tracks of the genres whose number of tracks is at most 17.", None),
    "DRV/string": ("Please find the artist name of each of the tracks of the albums of the tracks of the genre "
                   "with the lowest number of tracks among the genres.", "string",
                   "Sir Georg Solti, Sumi Jo & Wiener Philharmoniker",
                   "The artist name of each of the tracks of the albums of the tracks of the genre with the lowest "
                   "number of tracks among the genres is Sir Georg Solti, Sumi Jo & Wiener Philharmoniker.", None),
    "SEM": ("I'd like to know how many invoices customer François Tremblay has, and also the state or province of "
            "the customer.", "judge", [7, "QC"], "The number of invoices of customer François Tremblay and the "
            "state or province of the customer are 7 and QC, respectively.", None),
    "CMP": ("Comparing artist Battlestar Galactica (Classic) with artist Accept, how far apart are they in number "
            "of tracks of their albums?", "number", 20,
            "The difference is 20: 24 for artist Battlestar Galactica (Classic) against 4 for artist Accept.", None),
    "CMP/string": ("Which has more flights, aircraft N11206 or aircraft N11207?", "string", "N11206",
                   "Aircraft N11206 has more flights: 111 against 49.", None),
    "CMP/choice": ("Between customer id 2 and customer id 29, which one has more customers?", "number", 29,
                   "29 (4 vs 8)", None),
    "CMP/ko": ("성동구와 대전광역시 동구 중 읍면동이 더 많은 쪽은 어디인가요?", "string", "동구",
               "읍면동은 동구가 45곳으로 더 많습니다(다른 쪽은 17곳).", None),
    "COND": ("Does playlist Music Videos have at least 1477 tracks? If so, how many albums do the artists of those "
             "tracks have; if not, how many tracks are there?", "number", 1,
             "No: the number of tracks of playlist Music Videos is 1.", "else"),
    "COND+FAN": ("Are there at least 4 customers from Germany? If so, how many invoices do those customers have in "
                 "total; if not, how many customers are there?", "number", 28,
                 "Yes: there are 28 invoices of those customers.", "then"),
    "COND/ko": ("인천광역시 중구의 읍면동이 87곳 이상인가요? 그렇다면 그 읍면동의 시군구와 이름이 같은 행정구역이 몇 곳인지, "
                "아니라면 그 읍면동이 몇 곳인지 알려 주세요.", "number", 52,
                "아니요, 인천광역시 중구의 읍면동의 수는 52개입니다.", "else"),
    "MIXED": ("What is the number of airports within 100 km of the airport with the lowest latitude in degrees "
              "among the airports with the same country and subdivision as airport EWR (at most 10)?", "number", 7,
              "There are 7 airports within 100 km of the airport with the lowest latitude in degrees among the "
              "airports with the same country and subdivision as airport EWR (at most 10).", None),
}  # fmt: skip


def _task(key: str) -> dict[str, Any]:
    query, kind, value, text, branch = GOLDEN[key]
    return {
        "query": query,
        "answer": {"type": kind, "value": value, "text": text, "fields": ["x"], "branch": branch},
        "golden_actions": [],
        "max_allowed_calls": 6,
        "expected_state_hash": {},
        "reward_basis": ["RESPONSE", "ACTION"],
    }


def _gt(key: str) -> dict[str, Any]:
    """The ground truth exactly as the RL export writes it."""
    return formats.ground_truth(_task(key))


def _natural(key: str) -> str:
    _, kind, value, _, _ = GOLDEN[key]
    if kind == "judge":
        return f"They are {' and '.join(map(str, value))}."
    return f"{value}개입니다." if key.endswith("/ko") else f"The answer is {value}."


def _wrong(key: str) -> str:
    _, kind, value, _, _ = GOLDEN[key]
    if kind == "number":
        return f"The answer is {value + 3}."
    if key == "CMP/string":
        return "Aircraft N11207 has more flights than N11206."
    if key == "CMP/ko":
        return "성동구가 더 많습니다."
    return "I could not find it."


@pytest.mark.parametrize("key", sorted(GOLDEN))
def test_golden_natural_and_wrong_answers(key: str) -> None:
    gt = _gt(key)
    completions = [GOLDEN[key][3], _natural(key), _wrong(key)]
    assert answer_reward(completions, ground_truth=[gt] * 3) == [1.0, 1.0, 0.0]
    # verl: the same scores from the row's reward_model.ground_truth (JSON text)
    text = json.dumps(gt, ensure_ascii=False)
    assert [compute_score("toolcall-factory/music", c, text) for c in completions] == [1.0, 1.0, 0.0]


def test_conversational_completions_parquet_ground_truth_and_prompt_question() -> None:
    gt = _gt("MIXED")
    convo = [
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "near", "arguments": "{\"radius_km\": 100}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "{\"total_count\": 10, \"records\": [{\"id\": 100}]}"},
        {"role": "assistant", "content": "<think>100 km, at most 10, count 7</think>Within 100 km there are 7."},
    ]  # fmt: skip
    parquet = json.dumps(gt)  # the Parquet sibling carries ground_truth as JSON text
    assert answer_reward([convo], ground_truth=[parquet]) == [1.0]
    assert final_reply(convo) == "Within 100 km there are 7."
    # an export without the question column: the question comes from TRL's `prompts`
    old = {k: v for k, v in gt.items() if k != "question"}
    prompt = [{"role": "system", "content": "sys"}, {"role": "user", "content": GOLDEN["MIXED"][0]}]
    assert answer_reward(["Within 100 km there are 7."], ground_truth=[old], prompts=[prompt]) == [1.0]
    assert answer_reward(["Within 100 km there are 7."], ground_truth=[old]) == [0.0]  # 100 read as the answer
    # a completion that ends in a tool call has no final reply
    assert answer_reward([convo[:1]], ground_truth=[gt]) == [0.0]


def test_verl_reads_the_last_assistant_turn_of_decoded_text() -> None:
    gt = json.dumps(_gt("CMP"))
    text = (
        '<|im_start|>assistant\n<tool_call>{"name": "tracks"}</tool_call><|im_end|>\n<|im_start|>user\n'
        '<tool_response>{"total_count": 24}</tool_response><|im_end|>\n<|im_start|>assistant\n'
        "The difference is 20: 24 against 4.<|im_end|>"
    )
    assert compute_score("toolcall-factory/music", text, gt) == 1.0
    assert compute_score("toolcall-factory/music", text.replace("is 20", "is 21"), gt) == 0.0


def test_outcome_reward_response_only_basis_needs_no_environment() -> None:
    gt = _gt("COND")
    assert outcome_reward([GOLDEN["COND"][3], "It is 2."], ground_truth=[gt, gt]) == [1.0, 0.0]
    env_gt = {**gt, "reward_basis": ["RESPONSE", "ENVIRONMENT"], "expected_state_hash": {"music": "sha256:x"}}
    with pytest.raises(RewardError, match="environment_factory"):
        outcome_reward(["x"], ground_truth=[env_gt])


def test_unreadable_rows_fail_with_the_reason() -> None:
    with pytest.raises(RewardError, match="no ground_truth column"):
        answer_reward(["6"])
    with pytest.raises(RewardError, match=r"ground_truth\[0\]: not an exported ground_truth"):
        answer_reward(["6"], ground_truth=[{"answer": 6}])
    with pytest.raises(RewardError, match="data_source 'gsm8k'.*toolcall-factory export"):
        compute_score("gsm8k", "6", "#### 6")
    with pytest.raises(RewardError, match="2 values for 1 completions"):
        answer_reward(["6"], ground_truth=[_gt("SEQ")] * 2)
