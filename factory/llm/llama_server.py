"""`python -m factory.llm.llama_server ARGS`: llama-cpp-python's OpenAI-compatible server (same arguments
as `python -m llama_cpp.server`), with its echoed-logprob path made fast enough to score sentences.

llama-cpp-python builds the `logprobs` of a completion by sorting all ~49k (logprob, token id) pairs of the
vocabulary for every token in pure Python (`sorted(zip(row, range(n)), reverse=True)`, ~0.1-0.2 s a token
on this machine's cores), even when no top alternatives are asked for (`logprobs: 0`). The fluency scorer
(`fluency_scorer`, factory.llm.service.ChatBackend.score) asks for exactly that. This launcher gives the
llama module a `sorted` that orders such pairs with numpy (same order for distinct values, ties by token
id) and leaves every other call to the builtin; the server is otherwise unchanged.
"""

import builtins
from collections.abc import Iterable
from typing import Any

import numpy as np


def _vocab_row(pairs: zip) -> np.ndarray | None:
    """The logprob row behind `zip(row, range(n))` when that is what `pairs` is (not yet consumed), else None."""
    try:
        state: Any = pairs.__reduce__()
        values, ids = state[1]
        _, (row,), pos = values.__reduce__()
        _, (rng,), rpos = ids.__reduce__()
    except (TypeError, ValueError, AttributeError, IndexError):
        return None
    if not isinstance(row, np.ndarray) or row.ndim != 1 or pos != 0 or rpos != 0:
        return None
    if not isinstance(rng, range) or rng != range(len(row)):
        return None
    return row


def fast_sorted(iterable: Iterable[Any], /, *, key: Any = None, reverse: bool = False) -> list[Any]:
    """`sorted`, with a vocabulary row's (logprob, token id) pairs sorted by numpy (same order; values as
    Python floats); every other call goes to the builtin."""
    row = _vocab_row(iterable) if key is None and isinstance(iterable, zip) else None
    if row is None:
        return builtins.sorted(iterable, key=key, reverse=reverse)
    order = np.argsort(row, kind="stable")  # ascending by value, then by token id: the tuples' order
    if reverse:
        order = order[::-1]
    return list(zip(row[order].tolist(), order.tolist(), strict=True))


def main() -> None:
    import llama_cpp.llama
    from llama_cpp.server.__main__ import main as serve

    llama_cpp.llama.sorted = fast_sorted  # type: ignore[attr-defined]  # module global shadows the builtin
    serve()


if __name__ == "__main__":
    main()
