"""Errors of the model layer. Messages name the backend and its URL."""


class LLMError(RuntimeError):
    """Base class of model-layer errors."""


class BackendUnavailableError(LLMError):
    """A chat backend cannot be reached, or its server died mid-run.

    Replies received before the failure are already in the response cache, so a
    re-run pays only for the prompts that were not answered.
    """

    def __init__(self, backend: str, url: str, detail: str) -> None:
        self.backend = backend
        self.url = url
        self.detail = detail
        super().__init__(
            f"LLM backend {backend!r} at {url} is not reachable: {detail}. "
            "Replies received so far are cached; re-run once the server is up."
        )


class ServerStartError(LLMError):
    """A managed model server (llama.cpp or vLLM) did not become ready."""
