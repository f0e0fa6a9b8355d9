"""`python -m factory.llm.llama_server ARGS`: llama-cpp-python's OpenAI-compatible server (same arguments
as `python -m llama_cpp.server`), with its echoed-logprob path made fast enough to score sentences.

llama-cpp-python builds the `logprobs` of a completion by sorting all ~49k (logprob, token id) pairs of the
vocabulary for every token in pure Python (`list(sorted(zip(row, range(n)), reverse=True))`, then keeps
`[:logprobs]` of it): 0.1-0.2 s a token on this machine's cores, seconds a sentence, even when no
alternatives are asked for (`logprobs: 0`, what the fluency scorer sends: factory.llm.service.ChatBackend.score).

This launcher gives the llama module a `sorted` that, for such a vocabulary row inside a non-streamed
completion whose `logprobs` is known, returns only the top `logprobs` pairs in order (numpy
`argpartition`: exactly the prefix the caller keeps), and the whole row sorted by numpy otherwise (same
order as the builtin). Every other call is the builtin's; the server is otherwise unchanged.
"""

import builtins
import functools
import threading
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

_TOP = threading.local()  # `logprobs` of the completion this thread is computing (None: unknown)


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
    """`sorted`, with a vocabulary row's (logprob, token id) pairs ordered by numpy (values as Python floats):
    only the top `logprobs` of them inside a known non-streamed completion, else all. Everything else goes to
    the builtin."""
    row = _vocab_row(iterable) if key is None and isinstance(iterable, zip) else None
    if row is None:
        return builtins.sorted(iterable, key=key, reverse=reverse)
    k = getattr(_TOP, "k", None)
    if reverse and isinstance(k, int) and 0 <= k < len(row):
        if k == 0:
            return []
        part = np.argpartition(-row, k - 1)[:k]
        top = sorted(zip(row[part].tolist(), part.tolist(), strict=True), reverse=True)
        return top  # the builtin's first k pairs (ties at the cut may pick another id of the same value)
    order = np.argsort(row, kind="stable")  # ascending by value, then by token id: the tuples' order
    if reverse:
        order = order[::-1]
    return list(zip(row[order].tolist(), order.tolist(), strict=True))


def with_known_logprobs(create: Callable[..., Any]) -> Callable[..., Any]:
    """Wrap `Llama.create_completion`: while a non-streamed completion runs, `fast_sorted` knows its `logprobs`."""

    @functools.wraps(create)
    def create_completion(self: Any, *args: Any, **kwargs: Any) -> Any:
        if kwargs.get("stream"):
            return create(self, *args, **kwargs)
        _TOP.k = kwargs.get("logprobs")
        try:
            return create(self, *args, **kwargs)
        finally:
            _TOP.k = None

    return create_completion


def main() -> None:
    import llama_cpp.llama
    from llama_cpp.server.__main__ import main as serve

    llama_cpp.llama.sorted = fast_sorted  # type: ignore[attr-defined]  # module global shadows the builtin
    llama_cpp.llama.Llama.create_completion = with_known_logprobs(llama_cpp.llama.Llama.create_completion)  # type: ignore[method-assign]
    serve()


if __name__ == "__main__":
    main()
