"""What `lamar claude-code install` and `status` advise: how to fill a store with no lessons, what the hooks
left in the store they wrote to before, and the install that replaces a hook command whose Python is gone."""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any

from lamar.program import program_name


def carry(old: str, location: str, path: Any, args: argparse.Namespace, copy: str) -> None:
    """Hand the episodes the hooks on `old` still watch to the hooks on `location`, or say why they stay."""
    from lamar._errors import LamarError
    from lamar.cli.render import plural
    from lamar_claude_code.carry import carry_open
    from lamar_claude_code.context import find_repo

    everywhere = bool(getattr(args, "user", False))
    repo = None if everywhere else find_repo(path.parent.parent)
    try:
        carried, left = carry_open(old, location, str(repo) if repo else None, every_repo=everywhere)
    except (LamarError, OSError) as exc:
        print(f"note: the episodes the hooks on {old} still watch stay there ({exc})", file=sys.stderr)
        return
    if carried:
        print(f"carried {plural(carried, 'episode')} the hooks on {old} still watched: the next prompt, git and "
              f"the session's end settle them in {location}")
    if left:
        print(f"note: {plural(left, 'episode')} the hooks on {old} still watch, not in {location}, can take no "
              f"outcome there: {copy} copies them in, then this install run again carries them", file=sys.stderr)


def reinstall(scope: str, command: str) -> str:
    """The install that rewrites a hook command naming what is gone, with the store it named."""
    from lamar_claude_code.quick import named_store

    store = named_store(shlex.split(command.removesuffix(" || exit 1")))
    flag = {"project": " --project", "user": " --user"}.get(scope, "")
    return (f"`{program_name()} claude-code install{flag}{' --store ' + shlex.quote(store) if store else ''}` "
            "writes this Lamar's instead")



def older(command: str) -> str:
    """What an entry an older `install` wrote lacks of the command it writes now ("" when nothing)."""
    from lamar_claude_code import settings

    if "quick.py" not in command:
        return ""
    if not command.endswith(settings.FAIL_OPEN):
        return "no `|| exit 1`: should quick.py go, Python's exit 2 would block your prompts"
    if settings.shown(command) == command:  # the guard came later than `|| exit 1`
        return ("no check of its Python and quick.py: should one go, each event shows only the shell's "
                "\"not found\", naming no fix")
    return ""


def plugin_still_on(project: Any) -> None:
    """After `uninstall`, say so when an enabled copy of the plugin still runs Lamar's hooks in `project`: the
    entries gone, "no Lamar hooks to remove" alone reads as Lamar off."""
    from lamar_claude_code.installed_plugin import installed_plugins

    for plugin in sorted({p.id for p in installed_plugins(project=project) if p.enabled and p.events}):
        print(f"note: the plugin {plugin} still runs Lamar's hooks: `claude plugin disable {plugin}` turns it off",
              file=sys.stderr)

def no_lessons(location: str, explicit: str | None, folder: str) -> str:
    """The advice for a store that holds no lessons: its hooks inject nothing until it has some."""
    from lamar_claude_code.context import find_repo, project_name

    where = f" --store {shlex.quote(explicit)}" if explicit else ""
    lamar = program_name()
    # A lesson with no scope is recalled on every prompt of every project these hooks serve; the
    # imported rules are scoped to the project, so the hand-written one is too.
    # In / or the home folder outside git the hooks name no project: the user names it.
    project = shlex.quote(f"project={project_name(folder, find_repo(folder)) or 'NAME'}")
    return (f"next: the store holds no lessons yet, so no prompt gets any. `{lamar} import-rules{where}` shows "
            f"the rules of this repository's CLAUDE.md or AGENTS.md as lessons (add --apply to keep them); "
            f"`{lamar} add{where} --precondition .. --action .. --scope {project}` writes one by hand for this "
            f"project (without --scope, for every project){beside(location, where)}")


def beside(location: str, where: str) -> str:
    """Advice to copy the lessons of a store of the same name beside `location`, else "".

    Following the pages in order, `lamar import-rules --apply --create` fills the default
    experience.json, then `install --store ~/.lamar/experience.db` starts an empty store beside it. A store in
    another folder (the plugin's) names ~/.lamar's instead, where those steps left the lessons.
    """
    from pathlib import Path

    from lamar.cli.session import is_file_location, store_beside

    other = store_beside(Path(location).expanduser()) if is_file_location(location) else None
    if other is not None and holds_lessons(str(other)):
        return (f"; {other} beside it holds lessons that the hooks do not read: `{program_name()} import "
                f"{shlex.quote(str(other))}{where}` copies them in")
    # The plugin's store, or one named elsewhere, after hooks on the docs' ~/.lamar/experience.db (or the
    # default store): the lessons and their evidence would stay there, unnamed, and import-rules start over.
    for usual in (Path("~/.lamar/experience.db").expanduser(), Path("~/.lamar/experience.json").expanduser()):
        if (is_file_location(location) and usual.parent != Path(location).expanduser().parent
                and _filled(usual) and holds_lessons(str(usual))):
            return (f"; {usual} holds lessons that the hooks do not read: `{program_name()} import "
                    f"{shlex.quote(str(usual))}{where}` copies them in, with their evidence")
    return ""


def _filled(path: Any) -> bool:
    """Whether `path` is a file with something in it (opening a missing store would make one)."""
    try:
        return bool(path.is_file() and path.stat().st_size)
    except OSError:
        return False


def holds_lessons(location: str) -> bool:
    """Whether the store holds a lesson that is not retired; True when it cannot be read (no advice then)."""
    from lamar import Lamar
    from lamar._errors import LamarError

    try:
        lam = Lamar(location)
        try:
            return any(exp.status.value != "retired" for exp in lam.experiences())
        finally:
            lam.close()
    except (LamarError, OSError):  # the hint is advice: install's outcome never depends on reading the store
        return True


def task_line(record: Any) -> str:
    """The task of the hooks' last episode and the rule that named it, for `status`; "" when the state has none.
    A config's task rule wins over a built-in one that would also match: this line shows a user which did."""
    if not isinstance(record, dict) or not isinstance(record.get("context"), dict) or record.get("task_rule") not in (
            "config", "built-in"):
        return ""
    by = "a [[rules.task]] rule of your config" if record["task_rule"] == "config" else "the built-in rules"
    return f"task: {record['context'].get('task', '?')}, by {by}"


def tune_store(location: str, holdout: float | None) -> None:
    """Save the store's state under the tuning of the hooks just installed (`holdout`, None: the default), so
    that every `lamar` command reads it so (`agents_tuning`) from now, not only once the hooks have saved theirs.
    Back at the default, said once: a store left at an earlier `--holdout` would show a tuning no hook runs."""
    from lamar._errors import LamarError
    from lamar.cli.session import open_raw
    from lamar.policy.config import Policy
    from lamar.state.copied import agents_tuning, save_folded

    if holdout is not None:
        store = open_raw(location, create=False)
        try:
            save_folded(store, {"holdout": holdout})
        finally:
            store.close()
        return
    default = Policy().holdout
    try:
        store = open_raw(location, create=False)
        try:
            was = agents_tuning(store).get("holdout", default)
            if was != default:
                save_folded(store, {})
        finally:
            store.close()
    except (LamarError, OSError):  # install's outcome never depends on reading the store (the hooks log it)
        return
    if was != default:
        print(f"holdout: back at the default {default:g} (was {was:g}): the hooks run at it, and every "
              f"{program_name()} command reads the store at it")
