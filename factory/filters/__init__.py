"""judged_queries: the three-stage filter cascade of EDGE Appendix F.

`cascade.judge_tasks` is the entry point; `reasons` holds the closed set of rejection codes;
`stage_rules`, `stage_judges` (with `execution`) and `stage_resolve` are the three stages.
"""
