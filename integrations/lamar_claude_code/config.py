"""`HookConfig`: what a user can override or extend, read from TOML files (project over user).

    ~/.lamar/claude-code.toml          every project of this user
    <repository>/.claude/lamar.toml    one project (committed or not, as the team likes)

Both are optional; keys of the project file replace the user file's, rule lists are joined
(project rules first). The keys are documented in docs/claude-code.md.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

USER_CONFIG = "~/.lamar/claude-code.toml"
PROJECT_CONFIG = ".claude/lamar.toml"
MAX_CONTEXT_CHARS = 10_000  # Claude Code passes hook context this long whole; longer becomes a preview


class ConfigError(ValueError):
    """A config file that does not parse or holds a bad value; the message names the file."""


@dataclasses.dataclass(frozen=True)
class HookConfig:
    """Settings of the Claude Code hooks (defaults in brackets).

    Attributes:
        project: context "project" instead of the folder name [derived].
        language: context "language" instead of the tracked files' dominant one [derived].
        extra: more context keys, as they are [none].
        task_rules: (name, regex) checked before the built-in task rules [none].
        error_rules: regexes (group 1 = the class) checked before the built-in error rules [none].
        corrected: regexes that mark a follow-up prompt as a correction, added to the built-in ones.
        reasked_overlap: word overlap with the previous prompt that makes a re-ask [0.6].
        git_window_days: how long git may still settle an episode [7].
        budget_seconds: past this the hook injects nothing [2.0].
        k: most lessons per prompt [3].
        max_chars: most characters injected [10000].
        enabled: False turns the hooks off for this project without uninstalling [True].
    """

    project: str = ""
    language: str = ""
    extra: Mapping[str, str] = dataclasses.field(default_factory=dict)
    task_rules: tuple[tuple[str, str], ...] = ()
    error_rules: tuple[str, ...] = ()
    corrected: tuple[str, ...] = ()
    reasked_overlap: float = 0.6
    git_window_days: float = 7.0
    budget_seconds: float = 2.0
    k: int = 3
    max_chars: int = MAX_CONTEXT_CHARS
    enabled: bool = True


def load_config(repo: str | os.PathLike[str] | None, *, user: str | os.PathLike[str] | None = None) -> HookConfig:
    """The config for a project folder: the user file, then the project file over it.

    Raises:
        ConfigError: a file exists but does not parse or holds a bad value.
    """
    merged: dict[str, Any] = {}
    files = [Path(user if user is not None else USER_CONFIG).expanduser()]
    if repo is not None:
        files.append(Path(repo) / PROJECT_CONFIG)
    for path in files:
        if path.is_file():
            _merge(merged, _read(path), path)
    return _build(merged)


def _read(path: Path) -> dict[str, Any]:
    import tomllib  # only when a config file exists: the hook's start-up stays cheap

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: {exc}; fix or remove the file") from exc


def _merge(into: dict[str, Any], data: Mapping[str, Any], path: Path) -> None:
    context = data.get("context", {})
    rules = data.get("rules", {})
    outcome = data.get("outcome", {})
    hook = data.get("hook", {})
    for section, value in (("context", context), ("rules", rules), ("outcome", outcome), ("hook", hook)):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{path}: [{section}] must be a table")
    unknown = sorted(set(data) - {"context", "rules", "outcome", "hook"})
    if unknown:
        raise ConfigError(f"{path}: unknown sections {unknown}; use context, rules, outcome, hook")
    for key in ("project", "language"):
        if key in context:
            into[key] = _string(context[key], f"{path}: context.{key}")
    extra = {k: _string(v, f"{path}: context.extra.{k}") for k, v in dict(context.get("extra", {})).items()}
    into["extra"] = {**into.get("extra", {}), **extra}
    tasks = [(_string(r.get("name"), f"{path}: rules.task name"), _regex(r.get("pattern"), path))
             for r in _tables(rules.get("task", []), path, "rules.task")]
    into["task_rules"] = (*tasks, *into.get("task_rules", ()))
    errors = [_regex(p, path) for p in _list(rules.get("error", []), path, "rules.error")]
    into["error_rules"] = (*errors, *into.get("error_rules", ()))
    corrected = [_regex(p, path) for p in _list(outcome.get("corrected", []), path, "outcome.corrected")]
    into["corrected"] = (*corrected, *into.get("corrected", ()))
    for key, section in (("reasked_overlap", outcome), ("git_window_days", outcome), ("budget_seconds", hook),
                         ("k", hook), ("max_chars", hook), ("enabled", hook)):
        if key in section:
            into[key] = section[key]


def _build(values: dict[str, Any]) -> HookConfig:
    config = HookConfig(**values)
    if not 0.0 < config.reasked_overlap <= 1.0:
        raise ConfigError(f"outcome.reasked_overlap must be in (0, 1]; got {config.reasked_overlap!r}")
    if isinstance(config.k, bool) or not isinstance(config.k, int) or config.k < 0:
        raise ConfigError(f"hook.k must be a whole number >= 0; got {config.k!r}")
    if not isinstance(config.max_chars, int) or config.max_chars < 200:
        raise ConfigError(f"hook.max_chars must be a whole number >= 200; got {config.max_chars!r}")
    if not isinstance(config.enabled, bool):
        raise ConfigError(f"hook.enabled must be true or false; got {config.enabled!r}")
    for key in ("budget_seconds", "git_window_days"):
        value = getattr(config, key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
            raise ConfigError(f"{key} must be a number > 0; got {value!r}")
    return config


def _string(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise ConfigError(f"{where} must be a non-empty string; got {value!r}")
    return value


def _regex(value: Any, path: Path) -> str:
    text = _string(value, f"{path}: a rule pattern")
    try:
        re.compile(text)
    except re.error as exc:
        raise ConfigError(f"{path}: pattern {text!r} is not a valid regular expression ({exc})") from None
    return text


def _list(value: Any, path: Path, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ConfigError(f"{path}: {where} must be a list")
    return value


def _tables(value: Any, path: Path, where: str) -> list[Mapping[str, Any]]:
    items = _list(value, path, where)
    if not all(isinstance(item, Mapping) for item in items):
        raise ConfigError(f"{path}: {where} must be a list of tables ([[{where}]])")
    return items
