"""A recall context from what a model knows: its words, and labels spelled the way the store spells them."""

from __future__ import annotations

import difflib
import os
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lamar.recall import neutralize

# Keys a model often uses for a scope key; applied only when the store uses the target key.
ALIASES = {"repo": "project", "repository": "project", "project_name": "project", "lang": "language",
           "programming_language": "language", "task_class": "task", "task_type": "task", "error": "error_class",
           "error_type": "error_class", "exception": "error_class"}


class ContextReader:
    """Derives contexts for one server, in one working folder (the project the client started it in).

    Free text goes through the same rules as the Claude Code hooks (task class, error class, and the
    project and language of the folder the server runs in). Labels are matched to the scope keys
    and values the lessons use, ignoring case, with a few common key synonyms.

    Args:
        cwd: the folder whose git top-level names the project (default: the process's).
    """

    def __init__(self, cwd: str | None = None) -> None:
        self.cwd = cwd or os.getcwd()
        self._languages: dict[str, Any] = {}  # per folder, as the hooks cache it

    def from_text(self, text: str) -> dict[str, str]:
        """project, language, task and error_class, derived as the Claude Code hooks derive them."""
        from lamar_claude_code.commands import command_prompt
        from lamar_claude_code.config import ConfigError, HookConfig, RuleTimeout, load_config, resolve_rules
        from lamar_claude_code.context import derive_context, find_repo

        repo = find_repo(self.cwd)
        command = command_prompt(text, self.cwd, repo)  # as the hook reads a custom command: by its file's text
        try:
            config = resolve_rules(load_config(repo), text, task_text=command[0] if command else None)
        except (ConfigError, RuleTimeout):
            config = HookConfig()  # a broken or slow config must not cost the model its lessons
        # A desktop app starts its servers in / or the home folder: there, as in the hooks, no project or
        # language is derived (the model gives them as labels).
        return derive_context(self.cwd, text, config, self._languages)


def normalise(context: Mapping[str, str], known: Mapping[str, list[str]]) -> dict[str, str]:
    """`context` with keys and values respelled as the store has them (case and surrounding spaces
    ignored, synonyms for keys)."""
    keys = {_folded(k): k for k in known}
    out: dict[str, str] = {}
    for key, value in context.items():
        lowered = _folded(key)
        # A label the store spells exactly so is kept: folding is for labels that match no lesson,
        # and two scopes may differ only in case ("Shop" and "shop" are two labels).
        target = key if key in known else keys.get(lowered) or keys.get(ALIASES.get(lowered, ""), key)
        if target in out and target != key:
            target = key  # the model gave the real key too: keep both as given
        spelled = known.get(target, [])
        values = {_folded(v): v for v in spelled}
        out[target] = value if value in spelled else values.get(_folded(value), value)
    return out


_SEPARATORS = re.compile(r"[\s_-]+")


def _folded(label: str) -> str:
    # A model pads labels with spaces as readily as it capitalises them; the result shows them
    # neutralised, which trims them, so an unmatched " shop " would read as "shop". It also writes a
    # label's words apart with a hyphen or a space where the scope has an underscore ("build-fails"). A
    # name read from a macOS folder is decomposed ("e" + accent) where a model types "é", and the result
    # and the hint show both alike (neutralised, NFKC): compared in that form too.
    return _SEPARATORS.sub("_", unicodedata.normalize("NFKC", label).strip().lower())


def hint(context: Mapping[str, str], known: Mapping[str, list[str]]) -> str:
    """Why no lesson is eligible, which labels given look like misspellings of ones the lessons use, and
    which labels the lessons use (one sentence each)."""
    if not known:
        return "The store holds no lessons yet: propose_lesson adds one."
    return (f"No lesson's scope matches {_shown(context)}.{_meant(_close(context, known))} The lessons are scoped "
            f"by {_listing(known)} (the resource lamar://scopes lists them): recall with those labels, or with text "
            "that describes the task.")


def recall_hint(context: Mapping[str, str], known: Mapping[str, list[str]], eligible: Sequence[str],
                unscoped: Callable[[Sequence[str]], bool], *, placeless: bool = False) -> str:
    """recall's hint: `hint` when no lesson is eligible; when only lessons without a scope are (`unscoped`
    says so of the ids), the values the lessons use for each key given whose value none uses, for a key
    given that looks like a misspelling of one they use, and for the project when words read outside a
    project (`placeless`) named none; else ""."""
    if not eligible:
        return hint(context, known)
    # A lesson eligible by a scope matched a label given: the labels reached the lessons meant for them.
    missed = {key: value for key, value in context.items() if key in known and value not in known[key]}
    close = _close(context, known)
    # A desktop app starts the server in / or the home folder, where words derive no project: unless the
    # model names one, the project's lessons stay out of its reach, and nothing else would tell it so.
    unplaced = placeless and "project" in known and "project" not in context
    if not (missed or close or unplaced) or not unscoped(eligible):
        return ""
    named = f": no lesson is scoped by {_listing(missed)}" if missed else ""
    keys = [*missed, *(target for target, _, _ in close if target not in missed)]
    keys += ["project"] if unplaced and "project" not in keys else []
    where = (" This server runs outside a project, so no project was derived from the words: give the project the "
             "user works on in context, spelled as the lessons spell it.") if unplaced else ""
    return (f"Only lessons without a scope match {_shown(context)}{named}.{where}{_meant(close)} The lessons are "
            f"scoped by {_listing({k: known[k] for k in keys})} (the resource lamar://scopes lists them): recall with "
            "those labels for the lessons scoped by them.")


def _close(context: Mapping[str, str], known: Mapping[str, list[str]]) -> list[tuple[str, str, str]]:
    """(key the lessons use, what to say, label given) for each label given that looks like a misspelling
    of a key or a value the lessons use: only named to the model, never used in its place, as a label one
    letter off may be another project's."""
    keys = {_folded(k): k for k in known}
    found = []
    for key, value in context.items():
        target = key if key in known else _nearest(key, keys)
        if target is None:
            continue
        spelled = value if value in known[target] else _nearest(value, {_folded(v): v for v in known[target]})
        given = f"{neutralize(key)} = {neutralize(value)}"
        if spelled is not None and (target, spelled) != (key, value):
            found.append((target, f"{neutralize(target)} = {neutralize(spelled)} for {given}", key))
        elif target != key:
            found.append((target, f"the key {neutralize(target)} for {given}", key))
    return found


def _meant(close: list[tuple[str, str, str]]) -> str:
    return f" Did you mean {'; '.join(said for _, said, _ in close)}?" if close else ""


def _nearest(label: str, folded: Mapping[str, str]) -> str | None:
    found = difflib.get_close_matches(_folded(label), list(folded), n=1, cutoff=0.75)
    return folded[found[0]] if found else None


def _shown(context: Mapping[str, str]) -> dict[str, str]:
    return {neutralize(k): neutralize(v) for k, v in context.items()}


def _listing(labels: Mapping[str, str | list[str]]) -> str:
    # Scope values are lesson text a model reads: neutralised here as in every other place.
    spelled = {key: [values] if isinstance(values, str) else values for key, values in labels.items()}
    return "; ".join(f"{neutralize(key)} = {', '.join(neutralize(v) for v in values[:20])}"
                     + (" ..." if len(values) > 20 else "") for key, values in spelled.items())


__all__ = ["ALIASES", "ContextReader", "hint", "normalise", "recall_hint"]
