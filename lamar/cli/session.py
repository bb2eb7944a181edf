"""Where the command's store is (--store, $LAMAR_STORE, the store of Claude Code's hooks, the default),
and opening it (without creating it for read-only commands)."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from pathlib import Path

from lamar._errors import InvalidArgument, StoreError, UnknownExperience, advised
from lamar.engine import Lamar
from lamar.program import program_name as _lamar
from lamar.state.copied import agents_tuning
from lamar.store import _SQLITE_SUFFIXES, Store, location_refusal, open_store

DEFAULT_STORE = "~/.lamar/experience.json"
STORE_ENV = "LAMAR_STORE"


class UsageError(Exception):
    """The command line asked for something impossible; the message says what to do (exit 1)."""


class NoStore(StoreError):
    """No file store at `path`: the CLI's handler may name a store the user more likely meant."""

    def __init__(self, path: Path, message: str) -> None:
        super().__init__(message)
        self.path = path


def named_location(args: argparse.Namespace) -> str:
    """--store, else $LAMAR_STORE, else ~/.lamar/experience.json: the store without the hooks' say (the one
    `lamar claude-code install` writes into the hook commands); a --store given empty is refused."""
    named = getattr(args, "store", None)
    if named is not None and not named.strip():
        # An empty `--store "$UNSET_VARIABLE"` is a mistake; taken as "not given" it would quietly
        # read and write the default store, another store than the one meant.
        raise UsageError(f"--store is empty: name a store (--store PATH), or leave the flag out to use "
                         f"${STORE_ENV}, else {DEFAULT_STORE}")
    return named or os.environ.get(STORE_ENV) or DEFAULT_STORE


def store_location(args: argparse.Namespace, folder: str = ".") -> str:
    """The command's store: --store, else $LAMAR_STORE, else the one Claude Code's hooks read in `folder`
    when they name another one (see `store_source`), else ~/.lamar/experience.json."""
    return store_source(args, folder)[0]


def store_source(args: argparse.Namespace, folder: str = ".") -> tuple[str, str]:
    """The command's store, and how to name the hooks that chose it (" (the plugin lamar@lamar's)"; "" when
    --store, $LAMAR_STORE or the default did, unless the hooks write to that store too). Looked up once per
    command, for the first call's `folder`, and said once on stderr when the hooks chose it: a plugin user's
    `lamar ls` would otherwise list a store the plugin never fills."""
    found: tuple[str, str] | None = getattr(args, _SOURCE, None)
    if found is None:
        location, hooks = named_location(args), None
        if getattr(args, "store", None) or os.environ.get(STORE_ENV):
            # Naming the hooks' own store is no typo either: it is made as they would make it, unsaid.
            found = (location, written_by_hooks(location, folder))
        else:
            try:
                hooks = hooks_store(location, folder)
            except UsageError:  # hooks that name several stores: only --store can say which one is meant
                raise
            except Exception:  # noqa: BLE001 - Lamar runs without Claude Code: an unreadable setup leaves the default
                hooks = None
            if hooks is not None:
                print(f"store: {hooks[0]}{hooks[1]}", file=sys.stderr)
            found = hooks or (location, "")
        setattr(args, _SOURCE, found)
    return found


_SOURCE = "store_source"  # where store_source keeps its answer on the command's arguments


def hooks_store(location: str, folder: str) -> tuple[str, str] | None:
    """The store Claude Code's hooks (or Lamar's plugin) read for `folder`, and how to name its source, when it
    is not `location`, the store without them; None when no settings file there mentions Lamar, without
    the Claude Code integration, or with hooks that name no other store.

    Raises:
        UsageError: the installed hooks name more than one store (--store must say which).
    """
    if not _mentions_lamar(folder):
        return None
    try:
        from lamar_claude_code.context import find_repo
    except ImportError:  # without the integration no hooks run Lamar
        return None
    repo = find_repo(os.path.abspath(folder))
    found, whose = running_store(location, repo, installed_commands(repo))
    same = os.path.expanduser(found) == os.path.expanduser(location)  # a plugin set to that store
    return (found, whose) if whose and not same else None


def written_by_hooks(location: str, folder: str) -> str:
    """How to name the hooks of `folder` (Claude Code's settings entries, else Lamar's plugin) that write to the
    store `location`, as `running_store` names them; "" when none do, or they cannot be read."""
    if not _mentions_lamar(folder):
        return ""
    try:
        from lamar_claude_code.context import find_repo

        repo = find_repo(os.path.abspath(folder))
        commands = installed_commands(repo)
        # One command at a time: hooks that name several stores write to each of them.
        found = [running_store(DEFAULT_STORE, repo, [command]) for command in commands]
        found = found or [running_store(DEFAULT_STORE, repo, [])]
    except Exception:  # noqa: BLE001 - without the integration, or with a setup it cannot read, no hooks run
        return ""
    for store, whose in found:
        if _same_store(store, location) and (whose or commands):  # no entry, no plugin: no hooks at all
            return whose or " (named by the installed hooks)"
    return ""


def _same_store(one: str, other: str) -> bool:
    if not (is_file_location(one) and is_file_location(other)):
        return one == other
    return os.path.abspath(os.path.expanduser(one)) == os.path.abspath(os.path.expanduser(other))


def _mentions_lamar(folder: str) -> bool:
    """Whether a settings file Claude Code reads for `folder` holds the word "lamar", as each of Lamar's hook
    commands and its plugin's id do. Every command asks: without such a file no hook of Lamar's runs
    there, and the Claude Code integration is not imported."""
    here = Path(folder).resolve()
    try:
        files = [Path("~/.claude/settings.json").expanduser()]
    except RuntimeError:  # no home folder known: no user settings, and a --store with a full path still works
        files = []
    for top in (here, *here.parents):  # the git top-level, as lamar_claude_code.context.find_repo finds it
        if (top / ".git").exists():
            files += [top / ".claude" / "settings.json", top / ".claude" / "settings.local.json"]
            break
    for path in files:
        try:
            if b"lamar" in path.read_bytes():
                return True
        except FileNotFoundError:
            continue
        except OSError:  # unreadable here: the lookup, which reads them as Claude Code does, decides
            return True
    return False


def running_store(location: str, repo: Path | None, commands: list[str]) -> tuple[str, str]:
    """The store Claude Code's hooks read in `repo`, given the hook `commands` of Lamar's entries there, and
    how to name its source: the store the commands name, else the enabled plugin's when there is no
    entry; `location` and "" when they name none or that one.

    Raises:
        UsageError: the installed hook commands name more than one store.
    """
    from lamar_claude_code.quick import named_store  # how the hook itself reads its command line

    if not commands:  # no entries in the settings: the plugin's hooks are the ones that run
        named, whose = _plugin_store(repo)
        return named or location, whose
    stores = set()
    for command in commands:
        try:
            named = named_store(shlex.split(command))
        except ValueError:  # a command the shell cannot split either names no store
            named = None
        stores.add(os.path.expanduser(named or location))  # `~/x.db` and /home/you/x.db are one store
    if len(stores) > 1:
        raise UsageError(f"the installed hooks write to {len(stores)} stores ({', '.join(sorted(stores))}): "
                         "pass --store PATH to name one")
    named = stores.pop()
    return (location, "") if named == os.path.expanduser(location) else (named, " (named by the installed hooks)")


def settings_files(repo: Path | None) -> list[tuple[str, Path]]:
    """The settings files whose hooks Claude Code runs here, as (scope, path): the repository's, then yours."""
    from lamar_claude_code import settings

    files = [("user", settings.settings_path("user"))]
    if repo is not None:
        files = [(scope, settings.settings_path(scope, folder=repo)) for scope in ("local", "project")] + files
    return files


def installed_commands(repo: Path | None) -> list[str]:
    """The hook commands of Lamar's entries in the settings files read here; a file that cannot be read has none."""
    from lamar_claude_code import settings

    commands: list[str] = []
    for _, path in settings_files(repo):
        try:
            commands += [command for _, command in settings.entries(settings.read_settings(path))]
        except settings.SettingsError:  # Claude Code cannot run them either; `status` says why
            continue
    return commands


def _plugin_store(repo: Path | None) -> tuple[str | None, str]:
    """The store the enabled plugin's hooks write to, and how `status` names it; (None, "") when no
    plugin, or several that disagree, run hooks here."""
    # quick's, as the plugin's hook reads it; lamar_claude_code.plugin would import this CLI back.
    from lamar_claude_code.installed_plugin import installed_plugins
    from lamar_claude_code.quick import plugin_store

    found = {(plugin_store({**os.environ, **plugin.environment()}), plugin.id)
             for plugin in installed_plugins(project=repo) if plugin.enabled and plugin.events}
    if len({store for store, _ in found}) != 1:
        return None, ""
    return min(found)[0], f" (the plugin {', '.join(sorted(pid for _, pid in found))}'s)"


def is_file_location(location: str) -> bool:
    return location != ":memory:" and not location.startswith(("postgresql://", "postgres://"))


def require_existing(location: str, fix: str | None = None, *, hooks: str = "") -> None:
    """Raise StoreError when a file store is absent, so a read never creates one (nor a typo a new store);
    `hooks` names the Claude Code hooks that chose the store (see `store_source`)."""
    refusal = location_refusal(location)  # a location no backend takes: say so, not "no store at" it
    if refusal is not None:
        raise StoreError(refusal)
    from lamar.store.json_format import not_begun

    path = Path(location).expanduser()
    suffix = path.suffix.lower()
    if is_file_location(location) and suffix in _SQLITE_SUFFIXES:
        from lamar.store.sqlite_checks import refuse_orphan_wal

        refuse_orphan_wal(path)  # its store was moved away without it: said, rather than a typo suspected
    if is_file_location(location) and (suffix in _SQLITE_SUFFIXES and _empty(path)
                                       or suffix == ".json" and not_begun(path.absolute())):
        # Both backends take an empty file for an empty store: a read would make it one.
        raise StoreError(f"{path} is an empty file, not a store yet: " + (fix or (
            f"`{_lamar()} add --create` or `{_lamar()} import` makes it one")))
    if is_file_location(location) and path.is_symlink() and not path.exists():  # a typo would be no link at all
        raise StoreError(f"{path} is a symbolic link that leads nowhere (to {os.readlink(path)}: a loop, or a file "
                         "that is gone); it was left as it is: point it at the store, or name the store's own path")
    if is_file_location(location) and not path.exists():
        beside = store_beside(path)
        plugin = _plugin_default(path) if location == DEFAULT_STORE and beside is None else None
        # A path the user named is more likely a typo than a wish for another store: "pass --store"
        # would be advice they already followed.
        if location == DEFAULT_STORE:
            where = f"pass --store PATH or set {STORE_ENV}"
        elif hooks:  # no typo either: their store, before they have run
            where = (f"Claude Code's hooks here{hooks} make it at their first prompt; or pass --store PATH or set "
                     f"{STORE_ENV} for another store")
        else:
            where = f"check --store and ${STORE_ENV} for a typo"
        raise NoStore(path, f"no store at {Path(location).expanduser()}: " + (fix or (
            f"{where} (a new store is created by `{_lamar()} add --create` or `{_lamar()} import`)"))
            + (f"; there is one at {beside}: pass --store {beside}, or export "
               f"{STORE_ENV}={beside} for every command" if beside else "")
            + (f"; the Claude Code plugin's hooks write to {plugin}: pass --store {plugin}, or export "
               f"{STORE_ENV}={plugin} for every command" if plugin else ""))
    if location.startswith(("postgresql://", "postgres://")):
        from lamar.store.postgres.store import namespace_missing
        from lamar.store.postgres.url import parse_url

        missing = namespace_missing(location)
        if missing is not None:
            shown = parse_url(location, None)[2]
            raise StoreError(f"no store at {shown}: {missing[0]}; " + (fix or (
                f"{missing[1]} (a new store is created by `{_lamar()} add --create` or "
                f"`{_lamar()} import`)")))


def _plugin_default(path: Path) -> str | None:
    """The store Lamar's Claude Code plugin makes when its `store` option is unset, when it exists and is not
    `path`: a plugin loaded with `claude --plugin-dir` is listed in no settings file that `store_source` reads."""
    try:
        from lamar_claude_code.quick import plugin_store
    except ImportError:  # without the integration no plugin runs Lamar
        return None
    found = plugin_store({key: value for key, value in os.environ.items() if key in ("HOME", "XDG_DATA_HOME")})
    return found if Path(found) != path and Path(found).is_file() else None


def store_beside(path: Path) -> Path | None:
    """The same name with another store's suffix, when one exists: the docs' `--store ~/.lamar/experience.db`
    beside the default `~/.lamar/experience.json`, given once to `install` and then left out."""
    for suffix in (*_SQLITE_SUFFIXES, ".json"):
        other = path.with_suffix(suffix)
        if other != path and other.is_file() and not _empty(other):
            return other
    return None


def _empty(path: Path) -> bool:
    try:
        return path.stat().st_size == 0
    except OSError:
        return False


def open_raw(location: str, *, create: bool, busy: str = "run the command again once that writer is done",
             hooks: str = "", timeout: float | None = None) -> Store:
    """The store at `location`; unless `create`, a missing file store is an error (`hooks`: see
    `require_existing`). A SQLite file another process keeps locked past the wait (`timeout` seconds, else the
    store's own) says `busy`: what a user of this command can do."""
    if is_file_location(location) and Path(location).expanduser().is_dir():
        path = Path(location).expanduser()
        # Name the store the folder holds, if it holds one of the default names: a guess at another
        # one would cost the user a second error.
        held = [path / name for name in ("experience.db", "experience.json") if (path / name).is_file()]
        raise StoreError(f"{path} is a folder, not a store: name the store file in it (e.g. --store "
                         f"{(held or [path / 'experience.db'])[0]})")
    if not create:
        require_existing(location, hooks=hooks)
    elif hooks:  # the hooks' store will hold their prompts' contexts: made as they make it, its owner's only
        from lamar_claude_code.state import create_private

        create_private(location)
    try:
        return open_store(location) if timeout is None else open_store(location, timeout=timeout)
    except StoreError as exc:
        from lamar.store.sqlite_checks import BUSY_ADVICE

        if exc.advice != BUSY_ADVICE:
            raise
        # The store's advice names the Python API's `timeout=`, which a command line user cannot pass.
        raise advised(StoreError, str(exc).removesuffix(exc.advice), busy) from exc


def open_engine(args: argparse.Namespace, *, create: bool = False) -> Lamar:
    """The engine over the command's store (see `open_raw`), tuned as its agents folded it (`agents_tuning`)."""
    location, hooks = store_source(args)
    store = open_raw(location, create=create, hooks=hooks)
    return Lamar(store, **agents_tuning(store))


def store_bytes(location: str) -> int | None:
    """Bytes on disk of a file store (with SQLite's WAL), None for other backends."""
    if not is_file_location(location):
        return None
    path = Path(location).expanduser()
    total = 0
    for candidate in (path, path.with_name(path.name + "-wal")):
        try:
            total += candidate.stat().st_size
        except OSError:
            pass
    return total


def backend_name(location: str) -> str:
    if location == ":memory:":
        return "memory"
    if not is_file_location(location):
        return "postgres"
    return "json" if Path(location).suffix.lower() == ".json" else "sqlite"


def resolve_id(lam: Lamar, text: str) -> str:
    """The lesson id `text` names in `lam`'s store: the id itself or a prefix only one id starts with
    (`listing.named`)."""
    from lamar.arguments import unknown
    from lamar.listing import LS_ADVICE, named

    try:
        found = named((e.id for e in lam.experiences()), text)
    except InvalidArgument as exc:
        raise UsageError(str(exc)) from None
    if found is None:
        try:
            return lam.get(text).id  # added since the listing
        except UnknownExperience as exc:  # the engine's refusal knows an episode's id, and says so
            raise unknown(UnknownExperience, text, lam.store.location, LS_ADVICE, exc.held_as, what="lesson") from None
    return found
