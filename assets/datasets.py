"""Global dataset assets: dataset_splits and dataset_exports. Filled in by issue 7."""

ASSETS: list = []
CHECKS: list = []
