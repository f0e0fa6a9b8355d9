"""Lineage audits: `factory lineage <id>` and `factory lineage --summary` (issue 7 fills this in)."""

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `lineage` subcommand."""
