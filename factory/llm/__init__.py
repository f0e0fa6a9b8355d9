"""The model layer: one LLM interface over rules, local (llama.cpp), OpenAI-compatible and vLLM backends.

Import from the modules (this package imports nothing, so `import factory.llm.schemas` does
not load the OpenAI client):
- `factory.llm.client`: `ModelClient`, the Protocol the stages take (what they use of the service);
- `factory.llm.service`: `LLM` (implements `ModelClient`: `call/acall`, `map/amap`,
  `resolve/aresolve`, `uses_model`, `implementation`, `track`, `metadata`, `chat_backend`,
  `backend_variant`, …), `ChatBackend`, `RoleResult`, `Accounting`;
- `factory.llm.agent`: the tool-calling episode runner (`run_agent`, `resolve_task`) over a
  `ChatBackend`; `factory.llm.callformats`: tool calls in each model family's native format;
- `factory.llm.schemas` (role input/output models), `factory.llm.roles` (`ROLES`, `role`),
  `factory.llm.rules` (deterministic implementations), `factory.llm.errors`;
- the model config (`ModelsConfig`, backend configs, `ROLE_NAMES`, `RULES`) lives beside the
  project config in `factory.model_config`.
Dagster resources live in `factory.llm.resource` (imported separately, so the core never imports Dagster).
"""
