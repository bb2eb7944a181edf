"""Arguments as MCP clients send them: some clients send a boolean or a whole number as a JSON string
("true", "10") whatever the tool's schema says, so those strings are read as the schema's types."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from lamar_mcp.refusals import shown

_FLAGS = {"true": True, "false": False}


def flag(value: Any, name: str) -> bool:
    """`value` as a boolean: true or false, or the string "true" or "false" in any case; null is false,
    every flag's default (a client that fills each optional argument sends null for one left out).

    >>> flag("True", "dry_run"), flag(False, "dry_run"), flag(None, "dry_run")
    (True, False, False)
    >>> try: flag("yes", "dry_run")
    ... except ToolError as exc: print(exc)
    dry_run must be true or false; got 'yes'
    """
    if value is None or isinstance(value, bool):
        return bool(value)
    read = _FLAGS.get(value.strip().lower()) if isinstance(value, str) else None
    if read is None:  # "yes", "1": a guess could log an episode the model meant as a dry run
        raise ToolError(f"{name} must be true or false; got {shown(value)}")
    return read


def whole(value: Any) -> Any:
    """`value`, or the whole number a string of digits spells ("10" is 10); anything else as it is,
    for the caller's own check to refuse."""
    if isinstance(value, str) and value.strip().isascii() and value.strip().isdigit():
        return int(value.strip())
    return value


__all__ = ["flag", "whole"]
