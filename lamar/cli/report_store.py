"""The store a sleep report was made from: `lamar review` and `lamar apply` read that one when none is named."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

STORE_KEY = "store"  # the report's key for the file store it was made from


def note_store(data: dict[str, Any], location: str) -> None:
    """Keep in the report the file store it was made from, by its full path (a PostgreSQL URL, which may hold a
    password, is not kept)."""
    from lamar.cli.session import is_file_location

    if location != ":memory:" and is_file_location(location):
        data[STORE_KEY] = os.path.realpath(os.path.expanduser(location))


def read_made_from(args: argparse.Namespace, data: dict[str, Any], report: str) -> None:
    """Have the command read the store `data` was made from when neither --store nor $LAMAR_STORE names one,
    and that store is still there, said on stderr: its proposals name that store's lessons and events, and the
    default store (or the Claude Code hooks') would refuse each. A store named on purpose is read, with a word
    of the other."""
    from lamar.cli.session import _SOURCE, STORE_ENV, store_location

    made = data.get(STORE_KEY)
    if not isinstance(made, str) or not os.path.isfile(made):
        return
    named = getattr(args, "store", None) or os.environ.get(STORE_ENV)
    if not named:
        print(f"store: {made} (the one {report} was made from)", file=sys.stderr)
        setattr(args, _SOURCE, (made, ""))  # where store_source keeps its answer: no other lookup
        return
    location = store_location(args)
    if os.path.realpath(os.path.expanduser(location)) != made:
        print(f"note: {report} was made from {made}, not from {location}: its proposals name that store's "
              f"lessons (leave --store out, or name that store, to read it)", file=sys.stderr)


__all__ = ["STORE_KEY", "note_store", "read_made_from"]
