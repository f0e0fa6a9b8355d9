"""The model layer: one LLM interface over rules, local (llama.cpp), OpenAI-compatible and vLLM backends.

Public API:
- `LLM` (`factory.llm.service`): `call/acall`, `map/amap`, `resolve/aresolve`, `track`, `metadata`,
  `implementation`, `code_version`, `close`;
- `ModelsConfig` and the backend configs (`factory.llm.config`);
- the role input/output models (`factory.llm.schemas`) and the role registry (`factory.llm.roles.ROLES`);
- errors (`factory.llm.errors`).
Dagster resources live in `factory.llm.resource` (imported separately, so the core never imports Dagster).
"""

from factory.llm.config import (
    ROLE_NAMES,
    EmbeddingsConfig,
    LocalBackendConfig,
    ModelsConfig,
    OpenAIBackendConfig,
    VLLMBackendConfig,
)
from factory.llm.errors import BackendUnavailableError, LLMError, ServerStartError
from factory.llm.roles import ROLES, RoleSpec, role_prompts_version
from factory.llm.service import LLM, Accounting, CallFailure, RoleResult, RoleStats

__all__ = [
    "LLM",
    "ROLES",
    "ROLE_NAMES",
    "Accounting",
    "BackendUnavailableError",
    "CallFailure",
    "EmbeddingsConfig",
    "LLMError",
    "LocalBackendConfig",
    "ModelsConfig",
    "OpenAIBackendConfig",
    "RoleResult",
    "RoleSpec",
    "RoleStats",
    "ServerStartError",
    "VLLMBackendConfig",
    "role_prompts_version",
]
