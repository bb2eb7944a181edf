"""What `lamar claude-code status` says of each installed copy of Lamar's plugin: enabled or not, and whether
its hooks start as Claude Code starts them."""

from __future__ import annotations

import os
import shlex
import sys
from typing import Any


def plugin_status(repo: Any) -> bool:
    """Print each installed copy of the plugin and whether its hooks start; True when an enabled one FAILS.

    A disabled copy runs no hook: what would stop it is said, without a FAILS line or status's exit code,
    which would read as Lamar off while the hooks that do run are fine.
    """
    from lamar_claude_code.installed_plugin import check, installed_plugins

    plugins = installed_plugins(project=repo)
    fails = False
    if not plugins:
        print("plugin: not installed")
    for plugin in plugins:
        print(f"plugin {plugin.id} ({'enabled' if plugin.enabled else 'disabled'}) at {plugin.path}: "
              f"hooks {', '.join(plugin.events) or 'none'}")
        python = plugin.options.get("python", "")
        gone = os.path.isabs(python) and not os.path.exists(python)  # not the PATH: the venv was deleted or moved
        problem, runs = ("", "") if gone else check(plugin)
        if gone:
            problem = (f": its python option names {python}, which is gone (its virtual environment deleted or "
                       f"moved){', so Lamar is off' if plugin.enabled else ''}; `claude plugin install {plugin.id} "
                       f"--config python={shlex.quote(sys.executable)}` sets it to this Lamar's")
        elif problem:
            problem = f" without your PATH: {problem}"
        if problem:
            print(f"    {'FAILS' if plugin.enabled else 'not run while disabled; once enabled it would fail'}{problem}")
            fails = fails or plugin.enabled
        else:
            first, *notes = runs.splitlines() or [""]
            print(f"    runs without your PATH ({first})" + "".join(f"\n    but {note}" for note in notes))
    return fails
