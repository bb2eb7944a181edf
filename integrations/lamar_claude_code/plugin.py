"""The plugin's entry point (`python -m lamar_claude_code.plugin hook|mcp|status`): the store from its options."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

_ACTIONS = ("hook", "mcp", "status", "check")


def data_home(environ: Mapping[str, str] | None = None) -> Path:
    """The folder the plugin's default store lives in (see `plugin_store`)."""
    return Path(plugin_store(environ)).parent.parent


def plugin_store(environ: Mapping[str, str] | None = None) -> str:
    """The plugin's store: its `store` option when set, else a SQLite store in the user's data folder
    ($XDG_DATA_HOME, else ~/Library/Application Support on macOS, else ~/.local/share).

    Claude Code hands a plugin's options to hooks as `CLAUDE_PLUGIN_OPTION_<KEY>`; the plugin's MCP
    server gets the same names through its `env` (see plugins/lamar/.mcp.json).
    """
    from lamar_claude_code.quick import plugin_store as store

    return store(dict(os.environ if environ is None else environ))


def main(argv: Sequence[str] | None = None) -> int:
    """`hook` (one event on stdin, the store created on first use), `mcp [options]`, `status` or `check`
    (prints the interpreter and the store: `lamar claude-code status` runs it to see that the hooks start)."""
    args = list(sys.argv[1:] if argv is None else argv)
    action = args[0] if args else "hook"
    if action not in _ACTIONS:
        print(f"lamar plugin: unknown action {action!r}; use one of {', '.join(_ACTIONS)}", file=sys.stderr)
        return 1
    store = plugin_store()
    from lamar_claude_code.quick import homeless

    refusal = homeless(store)
    if refusal:
        print(refusal, end="", file=sys.stderr)
        return 0 if action == "hook" else 1
    if action == "hook":
        from lamar_claude_code.hook import main as hook

        return hook(store, create=True)
    if action == "check":
        print(f"python {sys.executable}, store {store}")
        import importlib.util

        if importlib.util.find_spec("mcp") is None:  # the hooks need the core alone; the plugin's server does not
            from lamar.extras import needs_extra

            print(needs_extra("its MCP server (plugin:lamar:lamar in `claude mcp list`) cannot start: lamar mcp "
                              "needs the MCP SDK", "mcp"))
        return 0
    from lamar.cli import main as cli

    if action == "mcp":
        from lamar_claude_code.state import create_private

        create_private(store)
        return cli(["mcp", "--store", store, *args[1:]])
    return cli(["claude-code", "status", "--store", store, *args[1:]])


if __name__ == "__main__":
    raise SystemExit(main())
