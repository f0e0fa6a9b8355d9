"""Judging assets: judged_queries per domain (EDGE Appendix F). Filled in by issue 6."""

ASSETS: list = []
CHECKS: list = []
