"""Lamar's plugin as Claude Code installed it: where, whether enabled, its options, and whether its hooks start."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from lamar_claude_code.settings import STRIPPED_PATH

PLUGIN_NAME = "lamar"
LAUNCHER = ("scripts", "lamar-plugin")


@dataclasses.dataclass(frozen=True)
class InstalledPlugin:
    """One installed copy of the plugin (`lamar@<marketplace>`)."""

    id: str
    path: Path
    enabled: bool
    options: dict[str, str]
    events: tuple[str, ...]

    @property
    def data(self) -> Path:
        """The folder Claude Code gives the plugin for its own files ($CLAUDE_PLUGIN_DATA)."""
        return Path("~/.claude/plugins/data").expanduser() / re.sub(r"[^A-Za-z0-9_-]", "-", self.id)

    def environment(self) -> dict[str, str]:
        """What Claude Code hands the plugin's hooks, with only a minimal PATH."""
        env = {"HOME": os.path.expanduser("~"), "PATH": STRIPPED_PATH, "CLAUDE_PLUGIN_ROOT": str(self.path),
               "CLAUDE_PLUGIN_DATA": str(self.data)}
        for key, value in self.options.items():
            env["CLAUDE_PLUGIN_OPTION_" + re.sub(r"[^A-Za-z0-9_]", "_", key).upper()] = value
        return env


def installed_plugins(claude_dir: str | os.PathLike[str] = "~/.claude",
                      project: str | os.PathLike[str] | None = None) -> list[InstalledPlugin]:
    """Every installed copy of Lamar's plugin ([] when Claude Code has none or its files are unreadable).

    Read from Claude Code's own files: `~/.claude/plugins/installed_plugins.json` (where each plugin
    was copied), `known_marketplaces.json` (a marketplace added from a folder, whose plugin runs in
    place) and the `enabledPlugins` and `pluginConfigs` keys of its settings files.
    """
    root = Path(claude_dir).expanduser()
    listing = _json(root / "plugins" / "installed_plugins.json").get("plugins", {})
    settings = [_json(root / "settings.json")]
    if project is not None:
        settings += [_json(Path(project) / ".claude" / name) for name in ("settings.json", "settings.local.json")]
    found = []
    for plugin_id, copies in listing.items() if isinstance(listing, dict) else ():
        if not str(plugin_id).startswith(PLUGIN_NAME + "@") or not isinstance(copies, list):
            continue
        enabled = any(bool((s.get("enabledPlugins") or {}).get(plugin_id)) for s in settings)
        options: dict[str, str] = {}
        for s in settings:
            configured = ((s.get("pluginConfigs") or {}).get(plugin_id) or {}).get("options") or {}
            options.update({str(k): str(v) for k, v in configured.items() if isinstance(v, (str, int, float))})
        in_place = _read_in_place(root, str(plugin_id).partition("@")[2])
        for copy in copies:
            path = Path(str(copy.get("installPath", ""))) if isinstance(copy, dict) else None
            path = in_place or path
            if path is not None and path.is_dir():
                events = tuple(_json(path / "hooks" / "hooks.json").get("hooks", {}))
                found.append(InstalledPlugin(str(plugin_id), path, enabled, options, events))
    return found


def _read_in_place(claude: Path, marketplace: str) -> Path | None:
    """The folder Claude Code reads the plugin from when its marketplace was added from a folder (a
    local clone) and lists it by a relative path: it runs the plugin there, and its cache copy, still
    named as `installPath`, goes stale with the first `git pull`. None for any other marketplace."""
    known = _json(claude / "plugins" / "known_marketplaces.json").get(marketplace)
    source = known.get("source") if isinstance(known, dict) else None
    if not isinstance(known, dict) or not isinstance(source, dict) or source.get("source") != "directory":
        return None
    location = known.get("installLocation") or source.get("path")
    if not isinstance(location, str) or not location:
        return None
    listing = _json(Path(location, ".claude-plugin", "marketplace.json")).get("plugins")
    for entry in listing if isinstance(listing, list) else ():
        where = entry.get("source") if isinstance(entry, dict) else None
        if entry.get("name") == PLUGIN_NAME and isinstance(where, str) and where.startswith("./"):
            folder = Path(os.path.normpath(os.path.join(location, where)))
            return folder if folder.is_dir() else None
    return None


def check(plugin: InstalledPlugin, timeout: float = 30.0) -> tuple[str, str]:
    """Start the plugin's launcher as its hooks start: ("", what it runs with) or (why it fails, "")."""
    launcher = plugin.path.joinpath(*LAUNCHER)
    try:
        done = subprocess.run([str(launcher), "check"], env=plugin.environment(), stdin=subprocess.DEVNULL,
                              capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"{launcher} did not start: {exc}", ""
    if done.returncode == 0:
        return "", done.stdout.decode(errors="replace").strip()
    tail = done.stderr.decode(errors="replace").strip().splitlines()[-1:] or [f"exit {done.returncode}"]
    return tail[0][:300], ""


def _json(path: Path) -> dict[str, Any]:
    try:  # utf-8-sig: Claude Code reads a settings file that starts with a byte-order mark
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
