"""The transport interface: the wire work of one source kind, behind `ToolExecutor`.

The executor keeps everything every kind shares (keys, redaction, retries and backoff,
per-platform concurrency, outcome classification of a body, the `CallResult`); a transport
only moves one call over the wire and says what came back:

- `open` / `close`: the executor's lifetime (`async with ToolExecutor(...)`): clients,
  sessions, subprocesses; `end_scope(episode)`: the end of one episode (`TransportOptions.scope`
  tells which episode a call belongs to), for what its calls acquired alone;
- `prepare(tool, args)`: what one call needs before it can be sent (a URL and request, a
  live session); raises `NotSent` for a call that cannot be sent (classified locally,
  ``attempts=0``, never retried);
- `send(tool, prepared)`: ONE attempt → an `Exchange`: a failure outcome, or ``outcome=None``
  and a parsed body for the executor to interpret; ``retry=True`` marks a transient failure
  the executor retries (``retry_after``: the delay the server asked for, seconds).

Transports are registered per source kind in `factory.tools.transports.TRANSPORTS`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from factory.tools.outcomes import Outcome

if TYPE_CHECKING:
    import httpx

    from factory.config import ExecutorConfig, SourceConfig
    from factory.tools.spec import ToolSpec

DETAIL_MAX = 300


@dataclass
class Exchange:
    """What came back from one execution (before extraction and redaction)."""

    outcome: Outcome | None = None  # set for failures; None means "a body to interpret"
    status_code: int | None = None
    body: Any = None
    detail: str = ""
    attempts: int = 1
    retry: bool = False  # a transient failure: the executor may try again
    retry_after: float | None = None  # seconds the server asked to wait before the next attempt


class NotSent(Exception):
    """A call that cannot be sent; the executor reports `outcome` with `detail` and ``attempts=0``."""

    def __init__(self, outcome: Outcome, detail: str) -> None:
        super().__init__(detail)
        self.outcome = outcome
        self.detail = detail


@dataclass(frozen=True)
class TransportOptions:
    """What every transport is built from: the executor config, the configured sources, an HTTP client."""

    cfg: ExecutorConfig
    sources: tuple[SourceConfig, ...] = ()
    http_client: httpx.AsyncClient | None = None  # an injected client is used and never closed
    workdir: str | None = None  # where stdio servers start: the project folder (None: the working directory)
    scope: Callable[[], object | None] | None = None  # the current episode of the executor (None: outside one)


class Transport(ABC):
    """The wire work of one source kind (`kind` = `SourceRef.kind` of the tools it executes)."""

    kind: ClassVar[str]

    def __init__(self, options: TransportOptions) -> None:
        self.options = options
        self.cfg = options.cfg

    async def open(self) -> None:  # noqa: B027 - optional hook
        """Acquire what every call shares (entered with the executor)."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release everything `open` and the calls acquired (the executor's exit)."""

    async def end_scope(self, scope: object) -> None:  # noqa: B027 - optional hook
        """Release what the calls of one episode (`TransportOptions.scope`) acquired for it alone."""

    async def prepare(self, tool: ToolSpec, args: dict[str, Any]) -> Any:
        """What `send` needs for this call (default: the arguments); `NotSent` when it cannot be sent."""
        return args

    @abstractmethod
    async def send(self, tool: ToolSpec, prepared: Any) -> Exchange:
        """One attempt of the call; never raises for remote failures."""


def nonempty(v: Any) -> bool:
    """A value that says something: not None, "", [] or {}."""
    return v is not None and v != "" and v != [] and v != {}


def short(text: str, limit: int = DETAIL_MAX) -> str:
    """One line of at most `limit` characters (whitespace runs collapsed, an ellipsis when cut)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
