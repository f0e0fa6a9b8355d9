"""`factory audit`: an answer audit independent of the synthesis path.

Every published task's golden calls are recomputed by reference implementations of the demo
tools' documented semantics over the raw package tables (`raw`, `census`, `reference`), the
answer is re-derived from the task's answer spec with the audit's own evaluator (`spec`), and the
bridged values between calls are checked for entity kinds (`kinds`). `run.audit` builds the
report; `cli` is the command. Nothing here imports `factory.demo`, `factory.synthesis` or
`factory.tools` (a test keeps it that way).
"""
