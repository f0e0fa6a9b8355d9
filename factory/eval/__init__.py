"""Model evaluation on the factory's tasks (EDGE App. B, kotraj-bench card, VAKRA §4).

The episode runner (`factory.llm.agent`: caps, failure kinds, full traces) and the native call
formats (`factory.llm.callformats`) belong to the model layer; this package scores and reports.

- `scoring`: RESPONSE / ENVIRONMENT / ACTION (correctness + Eq. 3 efficiency), the waterfall sieve;
- `metrics`: pass@1, pass@k, pass^k, tool precision, Student-t intervals, per-group tables;
- `harness`: settings, task selection, live episodes (one executor session each), preflight;
- `report`: the report value, markdown, asset metadata, console tables and files;
- `cli`: `factory eval`.

The Dagster asset is `assets/evaluation.py` (`evaluation_report`, group "evaluation", job "evaluation").
"""
