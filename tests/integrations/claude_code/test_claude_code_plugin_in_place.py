"""A plugin of a marketplace added from a folder is read in place, as Claude Code reads it, not from its cache copy."""

from __future__ import annotations

import json
from pathlib import Path

from lamar_claude_code.installed_plugin import installed_plugins

HOOKS = {"hooks": {"UserPromptSubmit": [], "Stop": []}}


def _claude(tmp_path: Path, source: dict[str, str], clone: Path) -> tuple[Path, Path]:
    """A ~/.claude where `claude plugin install lamar@lamar` ran: the cache copy it writes, and the marketplace."""
    claude, cache = tmp_path / "claude", tmp_path / "claude" / "plugins" / "cache" / "lamar" / "lamar" / "0.2.3"
    (cache / "hooks").mkdir(parents=True)
    (cache / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"UserPromptSubmit": []}}))  # the old copy
    (claude / "plugins" / "installed_plugins.json").write_text(
        json.dumps({"version": 2, "plugins": {"lamar@lamar": [{"scope": "user", "installPath": str(cache)}]}}))
    (claude / "plugins" / "known_marketplaces.json").write_text(
        json.dumps({"lamar": {"source": source, "installLocation": str(clone)}}))
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {"lamar@lamar": True}}))
    (clone / ".claude-plugin").mkdir(parents=True)
    (clone / ".claude-plugin" / "marketplace.json").write_text(
        json.dumps({"name": "lamar", "plugins": [{"name": "lamar", "source": "./plugins/lamar"}]}))
    (clone / "plugins" / "lamar" / "hooks").mkdir(parents=True)
    (clone / "plugins" / "lamar" / "hooks" / "hooks.json").write_text(json.dumps(HOOKS))
    return claude, cache


def test_a_local_clones_plugin_is_the_clones_folder_not_the_cache_copy(tmp_path: Path) -> None:
    clone = tmp_path / "lamar"
    claude, cache = _claude(tmp_path, {"source": "directory", "path": str(clone)}, clone)
    [plugin] = installed_plugins(claude)
    # `claude plugin list` says "Read from: <clone>/plugins/lamar": the hooks run the clone's launcher after a pull.
    assert (plugin.path, plugin.events, plugin.enabled) == (clone / "plugins" / "lamar", ("UserPromptSubmit", "Stop"),
                                                            True)
    for child in sorted(cache.rglob("*"), reverse=True):  # the cache cleared by hand: the plugin still runs
        child.unlink() if child.is_file() else child.rmdir()
    cache.rmdir()
    assert [p.path for p in installed_plugins(claude)] == [clone / "plugins" / "lamar"]


def test_a_plugin_from_a_repositorys_url_is_its_cache_copy(tmp_path: Path) -> None:
    clone = tmp_path / "marketplaces" / "lamar"  # Claude Code's own clone of the marketplace
    claude, cache = _claude(tmp_path, {"source": "git", "url": "https://example.com/lamar.git"}, clone)
    assert [p.path for p in installed_plugins(claude)] == [cache]
