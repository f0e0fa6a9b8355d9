"""`factory eval`: evaluate a model on a split (issue 6 fills this in)."""

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    """Add the `eval` subcommand."""
