"""evaluation_report (global, on demand). Filled in by issue 6."""

ASSETS: list = []
CHECKS: list = []
