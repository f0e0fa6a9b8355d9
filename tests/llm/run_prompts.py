"""Child process of the kill-midway test: run N judge prompts against the local backend.

Usage: python -m tests.llm.run_prompts PORT CACHE_PATH N
"""

import sys
from pathlib import Path

from factory.llm.schemas import NonGradableInput
from factory.llm.service import LLM
from tests.llm.conftest import local_models


def inputs(n: int) -> list[NonGradableInput]:
    return [
        NonGradableInput(query=f"How many flights left JFK on 2013-01-{i + 1:02d}?", answer=str(100 + i))
        for i in range(n)
    ]


def main() -> None:
    port, cache, n = int(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])
    cfg = local_models(port, cache, judge_non_gradable="local").model_copy(update={"max_retries": 0})
    # the requests queue on a one-slot server: on a loaded machine the last one waits minutes, which is not a failure
    cfg.backends["local"] = cfg.backends["local"].model_copy(update={"timeout_s": 600.0})
    with LLM(cfg, state_dir=cache.parent / "srv") as llm:
        results = llm.map("judge_non_gradable", inputs(n))
    sys.stdout.write(f"done {len(results)} requests={llm.accounting.total().requests}\n")


if __name__ == "__main__":
    main()
