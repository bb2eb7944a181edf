"""`HookConfig`: what a user can override or extend, read from TOML files (project over user)."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import re
import signal
import threading
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from lamar.arguments import MAX_SLOTS
from lamar.storable import finite_number, whole_number

USER_CONFIG = "~/.lamar/claude-code.toml"
PROJECT_CONFIG = ".claude/lamar.toml"
MAX_CONTEXT_CHARS = 10_000  # Claude Code passes hook context this long whole; longer becomes a preview
# The fence with one lesson cut as short as the hook cuts it: with less room no lesson is ever
# shown (a test recomputes it from the fence).
MIN_CONTEXT_CHARS = 272
# A prompt waits for its hook: past a minute it no longer waits for lessons but for a hook that
# hangs (the entries `install` writes stop it at 10 s). Larger values also overflow the waits.
MAX_BUDGET_SECONDS = 60.0


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
        budget_seconds: past this the hook injects nothing, at most MAX_BUDGET_SECONDS [2.0].
        k: most lessons per prompt [3].
        max_chars: most characters injected [10000].
        enabled: False turns the hooks off for this project without uninstalling [True].
        untrusted: the project file that was left out because it is not trusted [""].
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
    untrusted: str = ""


def load_config(repo: str | os.PathLike[str] | None, *, user: str | os.PathLike[str] | None = None,
                trust_file: str | os.PathLike[str] | None = None) -> HookConfig:
    """The config for a project folder: the user file, then the project file over it once trusted.

    The files, both optional:

        ~/.lamar/claude-code.toml          every project of this user
        <repository>/.claude/lamar.toml    one project, read once trusted (`lamar claude-code trust`)

    Keys of the project file replace the user file's, rule lists are joined (project rules first).
    The keys are documented in docs/claude-code.md. The rules' regular expressions run under a
    time limit (`resolve_rules`), so none can hold a prompt back.

    Raises:
        ConfigError: a file exists but does not parse or holds a bad value.
    """
    from lamar_claude_code.trust import TRUST_FILE, is_trusted

    merged: dict[str, Any] = {}
    try:
        files = [Path(user if user is not None else USER_CONFIG).expanduser()]
    except RuntimeError:  # no home folder (no HOME, no entry in the password database): no user file in it
        files = []
    project = Path(repo) / PROJECT_CONFIG if repo is not None else None
    if project is not None and project.is_file():
        if is_trusted(project, trust_file or TRUST_FILE):
            files.append(project)
        else:
            merged["untrusted"] = str(project)
    for path in files:
        if path.is_file():
            _merge(merged, _read(path), path)
    return _build(merged)


RULE_SECONDS = 0.25  # all of a config's own rules together, per prompt


class RuleTimeout(RuntimeError):
    """A config's regular expressions took longer than RULE_SECONDS on one prompt."""


def resolve_rules(config: HookConfig, prompt: str, seconds: float = RULE_SECONDS, *,
                  task_text: str | None = None) -> HookConfig:
    """`config` with its own rules replaced by literal patterns that give the same answers on `prompt`,
    the task rules on `task_text` when given: a custom command's text, which the built-in task rules read.

    A backtracking pattern can run for hours on a crafted prompt, and in a worker thread it holds
    the GIL, so no budget can stop it. Run here, in the main thread, a timer signal interrupts
    the matching (Python's regex engine checks for signals); the hook then works with the
    resolved literals only. Off the main thread (an in-process SDK hook) there is no timer.

    Raises:
        RuleTimeout: the rules took longer than `seconds`.
    """
    if not (config.task_rules or config.error_rules or config.corrected):
        return config
    from lamar.tasks import PROMPT_SCAN
    from lamar_claude_code.outcomes import FOLLOWUP_SCAN

    task = error = fix = None
    with _deadline(seconds):
        scan = prompt[:PROMPT_SCAN]
        asked = scan if task_text is None else task_text[:PROMPT_SCAN]
        task = next((name for name, pattern in config.task_rules if re.search(pattern, asked)), None)
        for pattern in config.error_rules:
            found = re.search(pattern, scan)
            if found:
                error = found.group(1) if found.groups() else found.group(0)
                break
        fix = next((m.group(0) for m in (re.search(p, prompt[:FOLLOWUP_SCAN]) for p in config.corrected) if m), None)
    return dataclasses.replace(config, task_rules=((task, r"(?s)\A"),) if task else (),
                               error_rules=(f"({re.escape(error)})",) if error else (),
                               corrected=(re.escape(fix),) if fix is not None else ())


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise RuleTimeout(f"the config's rules took over {seconds}s on this prompt")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


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
    if not (finite_number(config.reasked_overlap) and 0.0 < config.reasked_overlap <= 1.0):
        raise ConfigError(f"outcome.reasked_overlap must be a number in (0, 1]; got {config.reasked_overlap!r}")
    if not whole_number(config.k, low=0, high=MAX_SLOTS):
        raise ConfigError(f"hook.k must be a whole number from 0 to {MAX_SLOTS:,}; got {config.k!r}")
    if not whole_number(config.max_chars, low=MIN_CONTEXT_CHARS):
        raise ConfigError(f"hook.max_chars must be a whole number >= {MIN_CONTEXT_CHARS}, what the fence and one "
                          f"shortened lesson need; got {config.max_chars!r}")
    if config.max_chars > MAX_CONTEXT_CHARS:
        # Past it Claude sees a preview, and the lessons cut off would be counted as shown.
        raise ConfigError(f"hook.max_chars must be at most {MAX_CONTEXT_CHARS:,}, what Claude Code passes whole "
                          f"as hook context (longer becomes a short preview); got {config.max_chars!r}")
    if not isinstance(config.enabled, bool):
        raise ConfigError(f"hook.enabled must be true or false; got {config.enabled!r}")
    for key in ("budget_seconds", "git_window_days"):
        value = getattr(config, key)
        if not (finite_number(value) and value > 0):  # TOML spells nan and inf too
            raise ConfigError(f"{key} must be a number > 0; got {value!r}")
    if config.budget_seconds > MAX_BUDGET_SECONDS:
        raise ConfigError(f"hook.budget_seconds must be at most {MAX_BUDGET_SECONDS:g}: "
                          "a prompt waits for the hook, and "
                          f"Claude Code stops the installed one at 10; got {config.budget_seconds!r}")
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
