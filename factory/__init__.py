"""toolcall-factory: execution-verified multi-step tool-calling datasets, orchestrated by Dagster."""

__version__ = "0.1.0"
