"""The model layer: one LLM interface over rules, local (llama.cpp), OpenAI-compatible and vLLM backends.

Public API:
- `LLM` (`factory.llm.service`): `call/acall`, `map/amap`, `resolve/aresolve`, `track`, `metadata`,
  `implementation`, `code_version`, `close`;
- `ModelsConfig` and the backend configs (`factory.llm.config`);
- the role input/output models (`factory.llm.schemas`) and the role registry (`factory.llm.roles.ROLES`);
- errors (`factory.llm.errors`).
Dagster resources live in `factory.llm.resource` (imported separately, so the core never imports Dagster).
"""

import importlib
from typing import Any

# Names are loaded on first use: `factory.config` imports `factory.llm.config`, and that must not
# pull in the OpenAI client, the service and the prompts.
_EXPORTS = {
    "ROLE_NAMES": "factory.llm.config",
    "EmbeddingsConfig": "factory.llm.config",
    "LocalBackendConfig": "factory.llm.config",
    "ModelsConfig": "factory.llm.config",
    "OpenAIBackendConfig": "factory.llm.config",
    "VLLMBackendConfig": "factory.llm.config",
    "BackendUnavailableError": "factory.llm.errors",
    "LLMError": "factory.llm.errors",
    "ServerStartError": "factory.llm.errors",
    "ROLES": "factory.llm.roles",
    "RoleSpec": "factory.llm.roles",
    "role_prompts_version": "factory.llm.roles",
    "LLM": "factory.llm.service",
    "Accounting": "factory.llm.service",
    "CallFailure": "factory.llm.service",
    "RoleResult": "factory.llm.service",
    "RoleStats": "factory.llm.service",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'factory.llm' has no attribute {name!r}")
