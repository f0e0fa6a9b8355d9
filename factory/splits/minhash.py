"""Character n-gram MinHash over normalized text, an LSH index, and near-duplicate removal.

Text is normalized (NFKC, casefold, whitespace collapsed) and cut into overlapping character
n-grams (the kotraj-bench audit: 5-grams, num_perm=128). Each shingle is hashed with datasketch's
default `sha1_hash32` of its UTF-8 bytes, so a signature here equals
`MinHash(num_perm, seed).update_batch([s.encode() for s in shingles])` in plain datasketch:
anyone can re-run the audit without this code and get the same numbers.

MinHash LSH only proposes candidate pairs. Every candidate is decided on the exact Jaccard of
the two shingle-hash sets, so a decision never depends on estimator noise at a threshold; the
LSH banding is chosen so that a pair exactly at the lower threshold is proposed with probability
≥ `lsh_min_recall` (higher similarity: closer to 1).

Duplicate rule (within the dataset and against benchmarks): Jaccard ≥ near_duplicate_threshold,
or Jaccard ≥ structural_threshold when both sides have the same tool-sequence signature.
"""

import hashlib
import re
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from datasketch import MinHash, MinHashLSH

from factory.config import SplitsConfig

_WS = re.compile(r"\s+")
SCHEME = "affine32"


def normalize(text: str) -> str:
    """NFKC, casefold, every whitespace run collapsed to one space, trimmed."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", text or "").casefold()).strip()


def shingles(text: str, n: int) -> list[str]:
    """Distinct character n-grams of the normalized text (sorted); a text shorter than n is one shingle."""
    t = normalize(text)
    if not t:
        return []
    if len(t) <= n:
        return [t]
    return sorted({t[i : i + n] for i in range(len(t) - n + 1)})


def shingle_hashes(text: str, n: int) -> np.ndarray:
    """Sorted distinct sha1_hash32 values of the shingles (the set the Jaccard is computed on):
    the first 4 bytes of SHA-1 of the UTF-8 shingle, little-endian, as datasketch's sha1_hash32."""
    t = normalize(text)
    if not t:
        return np.zeros(0, dtype=np.uint32)
    grams = {t[i : i + n] for i in range(len(t) - n + 1)} if len(t) > n else {t}
    sha1 = hashlib.sha1
    buf = b"".join(sha1(g.encode("utf-8")).digest()[:4] for g in grams)
    return np.unique(np.frombuffer(buf, dtype="<u4")).astype(np.uint32)


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    """Exact Jaccard of two sorted distinct hash arrays (two empty texts are identical: 1.0)."""
    if a.size == 0 and b.size == 0:
        return 1.0
    if a.size == 0 or b.size == 0:
        return 0.0
    inter = np.intersect1d(a, b, assume_unique=True).size
    return inter / (a.size + b.size - inter)


def text_jaccard(a: str, b: str, n: int = 5) -> float:
    return jaccard(shingle_hashes(a, n), shingle_hashes(b, n))


def script_language(text: str) -> str:
    """'ko' when Hangul dominates the letters, 'en' for mostly Latin letters, else 'other'."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return "other"
    hangul = sum(
        1 for c in letters if "\uac00" <= c <= "\ud7a3" or "\u1100" <= c <= "\u11ff" or "\u3130" <= c <= "\u318f"
    )
    if hangul / len(letters) >= 0.3:
        return "ko"
    latin = sum(1 for c in letters if c.isascii())
    return "en" if latin / len(letters) >= 0.7 else "other"


def lsh_params(threshold: float, num_perm: int, min_recall: float) -> tuple[int, int, float]:
    """(bands, rows, recall at threshold): the most rows per band (fewest false candidates) such that
    a pair with Jaccard exactly `threshold` shares a band with probability ≥ min_recall."""
    for rows in range(num_perm, 0, -1):
        bands = num_perm // rows
        recall = 1.0 - (1.0 - threshold**rows) ** bands
        if recall >= min_recall:
            return bands, rows, recall
    return num_perm, 1, 1.0 - (1.0 - threshold) ** num_perm


def candidate_probability(similarity: float, bands: int, rows: int) -> float:
    return 1.0 - (1.0 - similarity**rows) ** bands


def _identity(x: int) -> int:
    return x


class Sketcher:
    """Builds (shingle-hash set, MinHash) pairs with one shared permutation table."""

    def __init__(self, cfg: SplitsConfig):
        self.cfg = cfg
        self.n = cfg.ngram
        self._template = MinHash(num_perm=cfg.num_perm, seed=cfg.minhash_seed, scheme=SCHEME)

    def minhash(self, hashes: np.ndarray) -> MinHash:
        m = MinHash(
            num_perm=self.cfg.num_perm,
            seed=self.cfg.minhash_seed,
            hashfunc=_identity,
            permutations=self._template.permutations,
            scheme=SCHEME,
        )
        if hashes.size:
            m.update_batch(hashes.tolist())
        return m

    def sketch(self, text: str) -> tuple[np.ndarray, MinHash]:
        h = shingle_hashes(text, self.n)
        return h, self.minhash(h)

    def method(self) -> dict[str, Any]:
        return {
            "shingles": f"character {self.n}-grams of NFKC + casefold + whitespace-collapsed text",
            "ngram": self.n,
            "num_perm": self.cfg.num_perm,
            "minhash_seed": self.cfg.minhash_seed,
            "shingle_hash": "datasketch sha1_hash32 of the UTF-8 shingle",
            "minhash_scheme": SCHEME,
        }


def duplicate_kind(similarity: float, same_structure: bool, cfg: SplitsConfig) -> str | None:
    """'near_duplicate', 'structural_duplicate' or None under the configured thresholds."""
    if similarity >= cfg.near_duplicate_threshold:
        return "near_duplicate"
    if same_structure and similarity >= cfg.structural_threshold:
        return "structural_duplicate"
    return None


@dataclass(frozen=True)
class Match:
    key: str
    similarity: float
    same_structure: bool
    kind: str | None


@dataclass
class SimilarityIndex:
    """LSH over MinHash signatures with exact verification on the shingle-hash sets.

    Keys are content ids (task ids, benchmark ids); `structure` is an optional tool-sequence
    signature compared for equality (None never equals anything).
    """

    cfg: SplitsConfig
    sketcher: Sketcher = field(init=False)
    bands: int = field(init=False)
    rows: int = field(init=False)
    recall: float = field(init=False)
    _lsh: MinHashLSH = field(init=False)
    _hashes: dict[str, np.ndarray] = field(init=False, default_factory=dict)
    _structure: dict[str, str | None] = field(init=False, default_factory=dict)
    _sigs: dict[str, np.ndarray] = field(init=False, default_factory=dict)
    candidates_checked: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        self.sketcher = Sketcher(self.cfg)
        low = min(self.cfg.structural_threshold, self.cfg.near_duplicate_threshold)
        self.bands, self.rows, self.recall = lsh_params(low, self.cfg.num_perm, self.cfg.lsh_min_recall)
        self._lsh = MinHashLSH(num_perm=self.cfg.num_perm, params=(self.bands, self.rows))

    def __len__(self) -> int:
        return len(self._hashes)

    def __contains__(self, key: str) -> bool:
        return key in self._hashes

    def add(self, key: str, text: str, structure: str | None = None, sketch=None) -> None:
        if key in self._hashes:
            raise ValueError(f"key {key!r} is already in the similarity index")
        h, m = sketch or self.sketcher.sketch(text)
        self._lsh.insert(key, m, check_duplication=False)
        self._hashes[key] = h
        self._structure[key] = structure
        self._sigs[key] = m.hashvalues

    def signature(self, key: str) -> np.ndarray:
        return self._sigs[key]

    def hashes(self, key: str) -> np.ndarray:
        return self._hashes[key]

    def matches(self, text: str, structure: str | None = None, sketch=None) -> list[Match]:
        """Every indexed key whose pair with `text` is a duplicate under the rule, best first
        (highest similarity, then smallest key)."""
        h, m = sketch or self.sketcher.sketch(text)
        out = []
        for key in self._lsh.query(m):
            self.candidates_checked += 1
            sim = jaccard(h, self._hashes[key])
            same = structure is not None and structure == self._structure[key]
            kind = duplicate_kind(sim, same, self.cfg)
            if kind:
                out.append(Match(key=key, similarity=round(sim, 6), same_structure=same, kind=kind))
        out.sort(key=lambda x: (-x.similarity, x.key))
        return out

    def method(self) -> dict[str, Any]:
        return {
            **self.sketcher.method(),
            "lsh": {
                "bands": self.bands,
                "rows": self.rows,
                "candidate_probability_at_threshold": round(self.recall, 6),
                "candidate_probability_at_near_duplicate": round(
                    candidate_probability(self.cfg.near_duplicate_threshold, self.bands, self.rows), 6
                ),
            },
            "decision": "exact Jaccard of the two shingle-hash sets, for every LSH candidate",
            "near_duplicate_threshold": self.cfg.near_duplicate_threshold,
            "structural_threshold": self.cfg.structural_threshold,
            "structural_rule": "Jaccard ≥ structural_threshold and equal tool-sequence signatures",
        }


@dataclass(frozen=True)
class DedupItem:
    key: str
    text: str
    structure: str | None = None


def deduplicate(
    items: Iterable[DedupItem], cfg: SplitsConfig, sketches: Mapping[str, Any] | None = None
) -> tuple[list[str], list[dict[str, Any]], SimilarityIndex]:
    """Greedy near-duplicate removal in ascending key order: an item is removed when it duplicates an
    already kept item (so of every duplicate pair the smallest key stays). Deterministic: the result
    depends only on the set of items, not their order.

    `sketches` ({key: Sketcher.sketch(text)}) saves recomputing what the caller already has.
    Returns (kept keys, removed records {key, reason, match, similarity}, the index of kept items).
    """
    index = SimilarityIndex(cfg)
    kept: list[str] = []
    removed: list[dict[str, Any]] = []
    seen: set[str] = set()
    for it in sorted(items, key=lambda x: x.key):
        if it.key in seen:
            raise ValueError(f"duplicate key {it.key!r} given to deduplicate")
        seen.add(it.key)
        sk = (sketches or {}).get(it.key) or index.sketcher.sketch(it.text)
        found = index.matches(it.text, it.structure, sketch=sk)
        if found:
            best = found[0]
            removed.append({"key": it.key, "reason": best.kind, "match": best.key, "similarity": best.similarity})
            continue
        index.add(it.key, it.text, it.structure, sketch=sk)
        kept.append(it.key)
    return kept, removed, index


def nearest_similarities(
    queries: np.ndarray, refs: np.ndarray, *, exclude: Sequence[int] | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """For each query signature (rows of `queries`), the largest MinHash-estimated Jaccard to any
    row of `refs` and its index (-1.0 / -1 when there is none). `exclude[i]` is a ref index to skip
    for query i (its own row), or -1."""
    m, p = queries.shape
    n = refs.shape[0]
    best = np.full(m, -1.0)
    arg = np.full(m, -1, dtype=np.int64)
    if n == 0:
        return best, arg
    for i in range(m):
        eq = (refs == queries[i]).sum(axis=1, dtype=np.uint32)
        if exclude is not None and exclude[i] >= 0:
            if n == 1:
                continue
            eq[exclude[i]] = 0
            j = int(eq.argmax())
            if j == exclude[i]:  # every other ref shares nothing; any other index is a nearest one
                j = 1 if exclude[i] == 0 else 0
        else:
            j = int(eq.argmax())
        arg[i] = j
        best[i] = float(eq[j]) / p
    return best, arg


def nearest_exact(
    query_sigs: np.ndarray,
    query_hashes: Sequence[np.ndarray],
    ref_sigs: np.ndarray,
    ref_hashes: Sequence[np.ndarray],
    *,
    exclude: Sequence[int] | None = None,
) -> list[float]:
    """Nearest-neighbour similarity per query: the neighbour is found by MinHash (largest estimated
    Jaccard), the similarity reported is the exact Jaccard of that pair (reproducible, never above
    the true nearest-neighbour similarity)."""
    _, arg = nearest_similarities(query_sigs, ref_sigs, exclude=exclude)
    return [round(jaccard(query_hashes[i], ref_hashes[j]), 6) for i, j in enumerate(arg) if j >= 0]


def stable_order(keys: Iterable[str], salt: str = "") -> list[str]:
    """Keys sorted by sha256(salt|key): a deterministic order independent of the input order."""
    return sorted(keys, key=lambda k: (hashlib.sha256(f"{salt}|{k}".encode()).hexdigest(), k))


def sample_rows(keys: Sequence[str], limit: int, salt: str = "nn") -> list[int]:
    """Indices of a deterministic sample of at most `limit` keys (all of them when they fit)."""
    if len(keys) <= limit:
        return list(range(len(keys)))
    pos = {k: i for i, k in enumerate(keys)}
    return sorted(pos[k] for k in stable_order(keys, salt)[:limit])


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    if not len(values):
        return {"p50": None, "p90": None, "p99": None, "mean": None, "max": None}
    a = np.asarray(values, dtype=float)
    return {
        "p50": round(float(np.percentile(a, 50)), 4),
        "p90": round(float(np.percentile(a, 90)), 4),
        "p99": round(float(np.percentile(a, 99)), 4),
        "mean": round(float(a.mean()), 4),
        "max": round(float(a.max()), 4),
    }


def histogram(values: Sequence[float], bins: int = 20) -> dict[str, list]:
    edges = np.linspace(0.0, 1.0, bins + 1)
    counts, _ = np.histogram(np.clip(np.asarray(values, dtype=float), 0.0, 1.0), bins=edges)
    return {"edges": [round(float(e), 4) for e in edges], "counts": [int(c) for c in counts]}
