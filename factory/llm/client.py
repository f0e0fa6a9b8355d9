"""`ModelClient`: what the stages use of the model service, as a Protocol.

The stages (graph, synthesis, filters, eval) and the assets take a `ModelClient` instead of
`Any`; the one implementation is `factory.llm.service.LLM` (a test asserts it satisfies the
Protocol). Nothing outside `factory.llm` reaches into the service's backends, cache or
counters: what a caller needs is a method here.

- roles: `call/acall`, `map/amap` (structured roles), `resolve/aresolve` (agent_resolver, with
  a tool executor);
- routing: `backend_name`, `uses_model` (is a role served by a model, not rules),
  `implementation` ({'backend', 'model'} for lineage), `code_version`;
- accounting: `track()` (counters of one block, e.g. an asset), `metadata()`;
- chat backends, for the evaluation harness: `backend_names`, `chat_backend(name)` (the
  endpoint the agent runner drives), `backend_variant(name, ...)` (the same endpoint with one
  run's sampling);
- lifecycle: `start`, `aclose_loop` (before an event loop the caller started ends), `close`.

This module is light (no OpenAI client): importing it for annotations costs nothing.
"""

from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel

from factory.llm.schemas import AgentResult, AgentTaskInput

if TYPE_CHECKING:
    from factory.llm.service import Accounting, ChatBackend, RoleResult

# A tool executor as `aresolve` calls it: (tool name, arguments) → result (or an awaitable of it).
Executor = Callable[[str, dict[str, Any]], Any | Awaitable[Any]]


@runtime_checkable
class ModelClient(Protocol):
    """The model service as the stages see it (implemented by `factory.llm.service.LLM`)."""

    # ------------------------------------------------------------------ roles

    def call(self, role_name: str, inp: BaseModel | dict[str, Any]) -> "RoleResult[Any]": ...

    async def acall(self, role_name: str, inp: BaseModel | dict[str, Any]) -> "RoleResult[Any]": ...

    def map(self, role_name: str, inputs: Sequence[BaseModel | dict[str, Any]]) -> "list[RoleResult[Any]]": ...

    async def amap(self, role_name: str, inputs: Sequence[BaseModel | dict[str, Any]]) -> "list[RoleResult[Any]]": ...

    def resolve(self, inp: AgentTaskInput | dict[str, Any], executor: Executor) -> "RoleResult[AgentResult]": ...

    async def aresolve(self, inp: AgentTaskInput | dict[str, Any], executor: Executor) -> "RoleResult[AgentResult]": ...

    # ------------------------------------------------------------------ routing

    def backend_name(self, role_name: str, language: str | None = None) -> str: ...

    def uses_model(self, role_name: str, language: str | None = None) -> bool: ...

    def implementation(self, role_name: str, language: str | None = None) -> dict[str, str]: ...

    def code_version(self, role_name: str, languages: Sequence[str] = ("en", "ko")) -> str: ...

    # ------------------------------------------------------------------ accounting

    def track(self) -> "AbstractContextManager[Accounting]": ...

    def metadata(self, prefix: str = "llm") -> dict[str, int | str]: ...

    # ------------------------------------------------------------------ chat backends (evaluation)

    def backend_names(self) -> list[str]: ...

    def chat_backend(self, name: str) -> "ChatBackend": ...

    def backend_variant(
        self, name: str, *, temperature: float, seed: int | None, max_tokens: int | None = None, cache: bool = True
    ) -> "ChatBackend": ...

    # ------------------------------------------------------------------ lifecycle

    def start(self, role_names: Sequence[str] | None = None) -> None: ...

    async def aclose_loop(self) -> None: ...

    def close(self) -> None: ...
