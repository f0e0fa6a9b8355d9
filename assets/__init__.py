"""Thin Dagster asset and asset-check wrappers over `factory.*` (one module per group)."""
