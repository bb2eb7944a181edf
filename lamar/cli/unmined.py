"""What `lamar sleep` without --traces and `lamar stats` say of the turns Claude Code's hooks traced for a store
and no sleep mined yet."""

from __future__ import annotations

import os
import shlex
from typing import IO


def unmined_traces(location: str, out: str | None = None) -> tuple[str, str] | None:
    """What a sleep without --traces (and `lamar stats` after it) leaves of the turns Claude Code's hooks traced for
    the store `location`, and the command that mines them into the report `out` (else report.json); None when they
    traced none. A sleep without a model only consolidates: a user of the hooks would not learn that they wait.
    Each caller lays the two out in its own columns."""
    import stat

    from lamar.cli.claude_code import TRACES
    from lamar.cli.render import plural
    from lamar.program import program_name

    if location == ":memory:":
        return None
    pooled = location.startswith(("postgresql://", "postgres://"))  # as lamar_claude_code.state.sidecar names it
    location = location if pooled else os.path.expanduser(location)  # as the sidecar expands it
    path = os.path.join(os.path.expanduser("~/.lamar"), TRACES) if pooled else f"{location}.{TRACES}"
    try:  # non-blocking: a FIFO planted at the path must not hang the sleep
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as file:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        turns = len(_trace_ids(file))
    if not turns:
        return None
    store = "" if pooled else f" --store {shlex.quote(location)}"
    command = (f"{program_name()} sleep{store} --traces {shlex.quote(path)} --model PROVIDER:MODEL "
               f"--out {shlex.quote(out or 'report.json')}")
    said = f"not mined: {plural(turns, 'turn')} that Claude Code's hooks traced in {path} (mining takes a model)"
    return said, command


def _trace_ids(file: IO[bytes]) -> set[str]:
    """The ids of the trace records in `file`, as sleep would read them: a blank line, a line that is no record
    (a hand edit, a torn write) and a repeated id (which sleep skips) are no turn to mine."""
    import json

    ids: set[str] = set()
    for line in file:
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(record, dict) and isinstance(record.get("id"), str):
            ids.add(record["id"])
    return ids
