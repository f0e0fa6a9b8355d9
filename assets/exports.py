"""dataset_exports (global): training and benchmark formats. Filled in by issue 7."""

ASSETS: list = []
CHECKS: list = []
