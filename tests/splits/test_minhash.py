"""Shingling, MinHash signatures, LSH banding and the duplicate rule."""

import random

import numpy as np
import pytest
from datasketch import MinHash

from factory.config import SplitsConfig
from factory.splits import minhash

CFG = SplitsConfig()
WORDS = "flight carrier airport weather delay departure arrival plane seats tail number origin dest hour".split()


def sentence(rng: random.Random, n: int = 14) -> str:
    return " ".join(rng.choice(WORDS) + str(rng.randint(0, 99)) for _ in range(n))


def perturb(text: str, rng: random.Random, k: int) -> str:
    words = text.split()
    for i in rng.sample(range(len(words)), k):
        words[i] = "zz" + str(rng.randint(100, 999))
    return " ".join(words)


def test_normalize_nfkc_casefold_whitespace():
    assert minhash.normalize("  ＡＢＣ\tStraße \n\n  ok ") == "abc strasse ok"
    assert minhash.normalize("서울  특별시") == "서울 특별시"
    assert minhash.shingles("abcdef", 5) == ["abcde", "bcdef"]
    assert minhash.shingles("ab", 5) == ["ab"]
    assert minhash.shingles("   ", 5) == []
    # case, width and spacing differences do not change the shingle set
    assert minhash.text_jaccard("Hello  World", "ＨＥＬＬＯ world") == 1.0


def test_signature_equals_plain_datasketch():
    text = "Which airline operates flight 1545 on 2013-01-01?"
    _, m = minhash.Sketcher(CFG).sketch(text)
    plain = MinHash(num_perm=128, seed=1)
    plain.update_batch([s.encode("utf-8") for s in minhash.shingles(text, 5)])
    assert np.array_equal(m.hashvalues, plain.hashvalues)


def test_minhash_estimate_tracks_exact_jaccard():
    rng = random.Random(3)
    sk = minhash.Sketcher(CFG)
    errs = []
    for k in range(0, 14, 2):
        a = sentence(rng)
        b = perturb(a, rng, k)
        (ha, ma), (hb, mb) = sk.sketch(a), sk.sketch(b)
        errs.append(abs(ma.jaccard(mb) - minhash.jaccard(ha, hb)))
    assert max(errs) < 0.15, errs  # 128 permutations: standard error ≈ 0.044


def test_lsh_params_defaults():
    bands, rows, recall = minhash.lsh_params(0.60, 128, 0.98)
    assert (bands, rows) == (32, 4)
    assert recall >= 0.98
    assert minhash.candidate_probability(0.85, bands, rows) > 0.999999
    assert minhash.candidate_probability(0.2, bands, rows) < 0.06


def _pair_with_jaccard(lo: float, hi: float, seed: int) -> tuple[str, str, float]:
    rng = random.Random(seed)
    for _ in range(5000):
        a = sentence(rng, 16)
        b = perturb(a, rng, rng.randint(1, 10))
        j = minhash.text_jaccard(a, b)
        if lo <= j < hi:
            return a, b, j
    raise AssertionError("no pair found")


@pytest.mark.parametrize(
    ("lo", "hi", "same_structure", "expected"),
    [
        (0.86, 0.99, False, "near_duplicate"),
        (0.86, 0.99, True, "near_duplicate"),
        (0.65, 0.80, True, "structural_duplicate"),
        (0.65, 0.80, False, None),
        (0.30, 0.55, True, None),
    ],
)
def test_duplicate_rule_through_the_index(lo, hi, same_structure, expected):
    a, b, j = _pair_with_jaccard(lo, hi, seed=int(lo * 100) + int(same_structure))
    idx = minhash.SimilarityIndex(CFG)
    idx.add("a", a, "t1>t2")
    found = idx.matches(b, "t1>t2" if same_structure else "t1>t3")
    kinds = [m.kind for m in found]
    assert kinds == ([expected] if expected else []), (j, found)
    if found:
        assert found[0].similarity == pytest.approx(j, abs=1e-6)


def test_duplicate_kind_boundaries():
    assert minhash.duplicate_kind(0.85, False, CFG) == "near_duplicate"
    assert minhash.duplicate_kind(0.8499, False, CFG) is None
    assert minhash.duplicate_kind(0.60, True, CFG) == "structural_duplicate"
    assert minhash.duplicate_kind(0.5999, True, CFG) is None


def test_lsh_recall_at_the_structural_threshold():
    """Pairs with exact Jaccard in [0.60, 0.70) are proposed as candidates ≥ 95% of the time."""
    rng = random.Random(11)
    pairs = []
    while len(pairs) < 150:
        a = sentence(rng, 16)
        b = perturb(a, rng, rng.randint(2, 6))
        if 0.60 <= minhash.text_jaccard(a, b) < 0.70:
            pairs.append((a, b))
    hits = 0
    for i, (a, b) in enumerate(pairs):
        idx = minhash.SimilarityIndex(CFG)
        idx.add(f"k{i}", a, "s")
        hits += bool(idx.matches(b, "s"))
    print(f"LSH recall at J∈[0.60,0.70): {hits}/{len(pairs)}")
    assert hits / len(pairs) >= 0.95


def test_deduplicate_keeps_smallest_key_and_ignores_input_order():
    rng = random.Random(5)
    base = [sentence(rng) for _ in range(20)]
    items = [minhash.DedupItem(f"id{i:02d}", t, "x") for i, t in enumerate(base)]
    items += [
        minhash.DedupItem(f"id{i + 50:02d}", t.upper() + " ", "x") for i, t in enumerate(base[:5])
    ]  # exact after normalize
    kept, removed, _ = minhash.deduplicate(items, CFG)
    shuffled = items[:]
    random.Random(1).shuffle(shuffled)
    kept2, removed2, _ = minhash.deduplicate(shuffled, CFG)
    assert (kept, removed) == (kept2, removed2)
    assert len(removed) == 5
    for r in removed:
        assert r["reason"] == "near_duplicate" and r["similarity"] == 1.0
        assert r["match"] < r["key"]
    with pytest.raises(ValueError, match="duplicate key"):
        minhash.deduplicate([items[0], items[0]], CFG)


def test_nearest_similarities_exclude_self():
    sk = minhash.Sketcher(CFG)
    texts = ["alpha beta gamma delta", "alpha beta gamma delta!", "completely different words here"]
    sigs = np.vstack([sk.sketch(t)[1].hashvalues for t in texts])
    best, arg = minhash.nearest_similarities(sigs, sigs, exclude=[0, 1, 2])
    assert list(arg[:2]) == [1, 0]
    assert best[0] > 0.7 and best[2] < 0.3
    best, arg = minhash.nearest_similarities(sigs[:1], sigs)
    assert arg[0] == 0 and best[0] == 1.0


def test_script_language():
    assert minhash.script_language("시도 코드 11의 인구는?") == "ko"
    assert minhash.script_language("How many flights?") == "en"
    assert minhash.script_language("Сколько рейсов?") == "other"
