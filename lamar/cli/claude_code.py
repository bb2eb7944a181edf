"""`lamar claude-code install|uninstall|status|hook|settle`: Lamar's hooks in Claude Code."""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Callable
from typing import Any

from lamar.cli.claude_code_advice import (
    carry,
    holds_lessons,
    no_lessons,
    older,
    plugin_still_on,
    reinstall,
    tune_store,
)
from lamar.program import program_name

STORE_ENV = "LAMAR_STORE"  # as lamar.cli.session has it; imported lazily, the hook path stays light
DEFAULT_STORE = "~/.lamar/experience.json"
# `status` printed a FAILS line: Lamar is off where that hook runs. Not 1, a usage error's, nor 2, a store error's.
EXIT_HOOKS_FAIL = 4
# --help of the commands that read the store the hooks write to (see _running_store)
_RUNNING = ("the one the installed hook commands name, else the enabled plugin's when no settings file holds an "
            "entry, else ")
TRACES = "claude-code.traces.jsonl"  # how lamar_claude_code.state.sidecar names the hooks' trace file
# Stop's transcript lacks the turn that just ended, and the newest turn it holds may still go on.
WHEN_TRACED = "a turn once two more have followed it in its session, a session's last turns when it ends"


def _usage(message: str) -> Exception:
    from lamar.cli.session import UsageError

    return UsageError(message)


def store_location(args: argparse.Namespace) -> str:
    """--store, else $LAMAR_STORE, else the default: what `install` writes into the hook commands and what
    they read, never a store looked up from hooks already installed."""
    from lamar.cli.session import named_location

    return named_location(args)


def _integration() -> Any:
    try:
        from lamar_claude_code import settings
    except ImportError as exc:
        from lamar.extras import needs_extra

        raise ImportError(needs_extra("the Claude Code integration is not installed", "claude-code", exc)) from exc
    return settings


def add_commands(command: Any) -> None:
    """Register the `claude-code` group through the parser's `command(name, help, handler)` helper.

    The work lives in the `lamar_claude_code` integration, imported when a command runs, so the
    rest of the CLI never needs it.
    """
    group = command("claude-code", "Claude Code hooks: install, uninstall, status, hook, settle, trust", _cmd_help)
    subs = group.add_subparsers(dest="claude_code", metavar="ACTION", parser_class=type(group))

    def sub(name: str, help_text: str, handler: Any, store: str = "") -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = subs.add_parser(name, help=help_text, description=help_text)
        parser.add_argument("--store", metavar="PATH", default=argparse.SUPPRESS,
                            help=f"the store (default: ${STORE_ENV}, else {store}{DEFAULT_STORE})")
        parser.set_defaults(handler=handler)
        return parser

    install = sub("install", "merge Lamar's hook entries into Claude Code's settings (prints what changed)",
                  cmd_install)
    _scope_options(install)
    install.add_argument("--holdout", metavar="Q", type=float, default=None,
                         help="the hooks' engine's holdout: the chance a wanted lesson is withheld to prove it "
                              "(default: the engine's); every lamar command then reads the store under it")
    _scope_options(sub("uninstall", "remove only Lamar's entries from Claude Code's settings", cmd_uninstall))
    sub("status", "what is installed, which store it uses, what the hooks saw last", cmd_status, store=_RUNNING)
    sub("hook", "handle one Claude Code hook event on stdin (what the settings entries run)", cmd_hook).add_argument(
        "--holdout", metavar="Q", default=None, help="the engine's holdout (default: the engine's)")
    sub("settle", "let git settle every watched episode now (for cron)", cmd_settle, store=_RUNNING)
    trusting = sub("trust", "let the hooks read this repository's .claude/lamar.toml as it is now (read it first)",
                   cmd_trust)
    trusting.add_argument("--dir", metavar="FOLDER", default=None, help="the repository (default: the one you are in)")
    trusting.add_argument("--revoke", action="store_true", help="stop trusting it")


def _cmd_help(args: argparse.Namespace) -> int:
    raise _usage("name an action: lamar claude-code install|uninstall|status|hook|settle|trust")


def _scope_options(parser: argparse.ArgumentParser) -> None:
    scope = parser.add_mutually_exclusive_group()
    scope.add_argument("--local", action="store_true",
                       help=".claude/settings.local.json of this repository, yours only (default)")
    scope.add_argument("--project", action="store_true",
                       help=".claude/settings.json of this repository, shared with whoever commits it")
    scope.add_argument("--user", action="store_true", help="~/.claude/settings.json (every project)")
    parser.add_argument("--dir", metavar="FOLDER", default=None,
                        help="the project folder (default: the git repository you are in; needed outside git)")


def _settings_file(args: argparse.Namespace) -> Any:
    settings = _integration()
    if getattr(args, "user", False):
        if args.dir:
            raise _usage("--dir names a project folder; --user is ~/.claude/settings.json: pass one of them")
        return settings.settings_path("user")
    scope = "project" if getattr(args, "project", False) else "local"
    try:
        return settings.settings_path(scope, folder=args.dir)
    except settings.SettingsError as exc:
        raise _usage(str(exc)) from None


def _write(settings: Any, path: Any, change: Callable[[], list[str]], unchanged: str) -> None:
    """Make `change` to the settings file `path` and print each line it returns, else `unchanged`."""
    try:
        changes = change()
    except settings.SettingsError as exc:
        raise _usage(str(exc)) from None
    for line in changes:
        print(f"{path}: {line}")
    if not changes:
        print(f"{path}: {unchanged}")


def cmd_install(args: argparse.Namespace) -> int:
    settings = _integration()
    from lamar_claude_code.state import create_private

    explicit = getattr(args, "store", None)
    location = store_location(args)
    if args.holdout is not None:
        from lamar.policy.config import Policy

        try:  # refused here, before any file is written, rather than at every hook event
            Policy(holdout=args.holdout)
        except ValueError as exc:
            raise _usage(f"--holdout: {exc}") from None
    path = _settings_file(args)
    create_private(location)  # now, so the first hook finds it; readable by its owner only
    before = settings.named_stores(path)
    _write(settings, path, lambda: settings.install(path, settings.hook_command(explicit, args.holdout)),
           "nothing to change, Lamar's hooks are installed")
    if path.name == settings.FILES["local"]:
        done = settings.keep_out_of_git(path)
        if done:
            print(done)
        team = path.with_name(settings.FILES["project"])
        if settings.installed(team):
            print(f"note: {team} also runs Lamar's hooks (an earlier install); each event would run twice: "
                  f"{program_name()} claude-code uninstall --project{' --dir ' + str(args.dir) if args.dir else ''}",
                  file=sys.stderr)
    elif path.name == settings.FILES["project"] and explicit and settings.tracked(path):
        print(f"note: {path} is tracked by git and now names a store on this machine ({location}); "
              "teammates get the same path: --local keeps it yours", file=sys.stderr)
    twice = _twice_note(_enabled_plugins(path.parent.parent), [path])
    if twice:
        print(twice, file=sys.stderr)
    print(f"store: {location}")
    from lamar_claude_code.carry import carry_sources

    for old in sorted((before | set(carry_sources(location))) - {os.path.expanduser(location)}):
        # Re-run with another --store, the hooks leave their lessons and evidence behind without a word.
        copy = f"`{program_name()} import {shlex.quote(old)} --store {shlex.quote(location)}`"
        if old in before and os.path.exists(old) and holds_lessons(old):
            print(f"note: these hooks wrote to {old} until now; its lessons and their evidence stay there: "
                  f"{copy} copies them in")
        if os.path.exists(old):
            carry(old, location, path, args, copy)
    if not holds_lessons(location):
        # Hooks over an empty store inject nothing, ever: a new user would see no effect and no reason.
        print(no_lessons(location, explicit, str(args.dir or os.getcwd())))
    tune_store(location, args.holdout)
    problem = settings.runs_without_path(settings.hook_command(explicit, args.holdout))
    if problem:
        print(f"warning: the hook command fails when Claude Code starts without your shell's PATH ({problem})",
              file=sys.stderr)
        return 1
    return 0


def cmd_uninstall(args: argparse.Namespace) -> int:
    settings = _integration()
    path = _settings_file(args)
    had = path.exists()  # deleted now, it held Lamar's hooks alone: an older install's unmarked line is Lamar's
    _write(settings, path, lambda: settings.uninstall(path), "no Lamar hooks to remove")
    if path.name == settings.FILES["local"] and not path.exists() and (done := settings.let_into_git(path, older=had)):
        print(done)  # the file is gone: the line install added for it goes too
    plugin_still_on(path.parent.parent)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    settings = _integration()
    from lamar.cli.claude_code_advice import task_line
    from lamar.cli.claude_code_plugin import plugin_status
    from lamar.cli.render import plural
    from lamar.cli.session import UsageError, settings_files
    from lamar_claude_code.context import find_repo
    from lamar_claude_code.hook import paths_for
    from lamar_claude_code.notice import status_line
    from lamar_claude_code.started_over import tracked_line
    from lamar_claude_code.state import UNWRITABLE, fallback_log, read_state, tail

    repo = find_repo(os.getcwd())
    checked: dict[str, str] = {}  # each distinct command is started once, whichever file holds it
    holding: list[Any] = []
    fails = False  # any FAILS line: a script reads Lamar as off from the exit code, apart from a usage error's
    for scope, path in settings_files(repo):
        try:
            entries = settings.entries(settings.read_settings(path))
        except settings.SettingsError as exc:  # Claude Code cannot read it either: say so, not "not installed"
            print(f"{scope} settings {path}: cannot be read: {exc}")
            continue
        print(f"{scope} settings {path}: " + ("installed" if entries else "not installed"))
        holding += [path] if entries else []
        for event, command in entries:
            missing = settings.gone(command)
            if command not in checked:
                checked[command] = missing or settings.runs_without_path(command)
            problem = checked[command]
            print(f"  {event}: {settings.shown(command)}")
            fails = fails or bool(problem)
            if missing:
                print(f"    FAILS: {missing}, so Lamar is off; {reinstall(scope, command)}")
            elif problem:
                print(f"    FAILS without your PATH: {problem}; run lamar claude-code install again")
            else:
                print("    runs without your PATH")
            if lacks := older(command):
                print(f"    {lacks}; run lamar claude-code install again")
    fails = plugin_status(repo) or fails
    if twice := _twice_note(_enabled_plugins(repo), holding):
        print(twice)
    _config_status(repo)
    try:
        location, whose = _running_store(args, repo, list(checked))
    except UsageError:  # hooks that name several stores: each is listed above, and this line shows the default
        location, whose = store_location(args), ""
    paths = paths_for(location)
    said = [whose.strip()[1:-1]] if whose else []  # whose is " (...)": one bracket holds both clauses
    if "://" not in location and not os.path.exists(os.path.expanduser(location)):
        said.append("missing")
    print(f"store: {location}" + (f" ({', '.join(said)})" if said else ""))
    if loose := _readable_by_others(location):
        print(f"  readable by other users of this machine (it holds your prompts' contexts): chmod 600 {loose}")
    if failing := status_line(location):
        print(f"  {failing}")
    # The plugin's users never see install's advice, and hooks over an empty store are a silent no-op.
    # A missing store is not opened (that would create it): the first hook or `import-rules --apply` makes it.
    missing = "://" not in location and not os.path.exists(os.path.expanduser(location))
    if missing or not holds_lessons(location):
        print(no_lessons(location, getattr(args, "store", None), os.getcwd()))
    state = read_state(paths.state)
    last = state["last"]
    if last:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(float(last.get("time", 0))))
        # Only a prompt injects: "0 characters injected" after a Stop read as a failed injection.
        injected = (f", {plural(last.get('injected', 0), 'character')} injected"
                    if last.get("event") == "UserPromptSubmit" else "")
        # A session's start, or a prompt that recalled nothing, has no episode: "episode None" read as a fault.
        episode = f", episode {last['episode']}" if last.get("episode") else ", no episode"
        print(f"last event: {last.get('event')} at {when} in {last.get('cwd')} "
              f"(session {last.get('session')}{episode}{injected})")
        if line := task_line(state["episodes"].get(last.get("episode"))):
            print(f"  {line}")
    else:
        print("last event: none seen yet")
    print(tracked_line(state["episodes"], location))
    print(f"traces for sleep: {paths.traces}" + ("" if paths.traces.exists() else f" (none yet: {WHEN_TRACED})"))
    print(f"log: {paths.log}")
    for line in tail(paths.log, 5):
        print(f"  {line}")
    fallback = fallback_log()
    if fallback != paths.log:
        # The hooks write here what the store's folder would not take: the only trace of that failure.
        lost = [line for line in tail(fallback, 200) if f" {paths.log} {UNWRITABLE} " in line][-5:]
        if lost:
            print(f"log lines that could not be written there, in {fallback}:")
            for line in lost:
                print(f"  {line}")
    return EXIT_HOOKS_FAIL if fails else 0


def _running_store(args: argparse.Namespace, repo: Any, commands: list[str]) -> tuple[str, str]:
    """The store a command without --store or $LAMAR_STORE reads, and how to name its source ("" for the flags').

    `install --store X` writes X into the hook commands; a later `status` or `settle` without --store
    would otherwise read the default store, where these hooks never write.

    Raises:
        UsageError: the installed hook commands name more than one store.
    """
    from lamar.cli.session import running_store

    location = store_location(args)
    if getattr(args, "store", None) or os.environ.get(STORE_ENV):
        return location, ""
    return running_store(location, repo, commands)


def _readable_by_others(location: str) -> str:
    """The store's files (with SQLite's -wal and -shm) that others may read, quoted for a shell; "" for none.
    The hooks make a store their user's only, but one made earlier, or by hand, keeps the umask's modes."""
    if location == ":memory:" or "://" in location:
        return ""
    path = os.path.expanduser(location)
    loose = []
    for name in (path, path + "-wal", path + "-shm"):
        try:
            if os.stat(name).st_mode & 0o077:
                loose.append(shlex.quote(name))
        except OSError:  # absent (a -wal between writes) or unreadable: nothing to say of it
            continue
    return " ".join(loose)


def _config_status(repo: Any) -> None:
    from pathlib import Path

    from lamar_claude_code.config import PROJECT_CONFIG, USER_CONFIG, ConfigError, load_config
    from lamar_claude_code.trust import is_trusted

    project = repo / PROJECT_CONFIG if repo is not None else None
    trusted = project is not None and project.is_file() and is_trusted(project)
    if project is not None and project.is_file():
        state = "trusted" if trusted else "NOT trusted, so ignored: read it, then lamar claude-code trust"
        print(f"project config {project}: {state}")
    try:
        config = load_config(repo)
    except ConfigError as exc:  # the hooks log it at each event and inject nothing
        print(f"config: the hooks inject nothing here until it is fixed: {exc}")
        return
    if not config.enabled:  # set weeks ago and forgotten, it would read as hooks that run and learn
        import tomllib

        where = Path(USER_CONFIG).expanduser()
        if trusted and project is not None:
            with project.open("rb") as handle:
                if tomllib.load(handle).get("hook", {}).get("enabled") is False:
                    where = project
        print(f"hooks: OFF here, by `enabled = false` under [hook] in {where}: no lesson is recalled and nothing "
              "is learned; set it to true, or remove it, to turn them back on")


def _enabled_plugins(project: Any) -> list[str]:
    """The ids of the enabled copies of Lamar's plugin that bring hooks, for this project."""
    from lamar_claude_code.installed_plugin import installed_plugins

    return sorted({plugin.id for plugin in installed_plugins(project=project) if plugin.enabled and plugin.events})


def _twice_note(plugins: list[str], files: list[Any]) -> str:
    """Why each prompt would run Lamar twice, or "": Claude Code runs a plugin's hooks beside the settings' own."""
    if not plugins or not files:
        return ""
    return (f"note: the plugin {', '.join(plugins)} and the entries in {', '.join(map(str, files))} both run "
            f"Lamar's hooks, so each prompt would be recalled and injected twice: keep one "
            f"(`claude plugin disable {plugins[0]}`, or `{program_name()} claude-code uninstall` "
            "with --local, --project or --user)")


def no_traces_yet(path: str) -> str | None:
    """Why the Claude Code hooks' trace file `path` is missing and what to do; None for any other file."""
    if not os.path.basename(path).endswith(TRACES):
        return None
    # The hooks' first event writes the state file beside it: without it, no hook has run for this store.
    if os.path.exists(os.path.expanduser(path.removesuffix("traces.jsonl") + "state.json")):
        return (f"no trace file {path} yet: Lamar's Claude Code hooks write it as sessions go ({WHEN_TRACED}); "
                "run this again once a session has ended")
    return (f"no trace file {path} yet, and no Claude Code hook has run for its store: the hooks write it as "
            f"sessions go ({WHEN_TRACED}); `lamar claude-code status`, run in the repository, says whether "
            "they are installed and which store they write to")


def cmd_trust(args: argparse.Namespace) -> int:
    _integration()
    from pathlib import Path

    from lamar_claude_code.config import PROJECT_CONFIG, ConfigError, load_config
    from lamar_claude_code.context import find_repo
    from lamar_claude_code.trust import trust

    repo = find_repo(args.dir or os.getcwd())
    if repo is None:
        raise _usage(f"{args.dir or os.getcwd()} is not inside a git repository; pass --dir REPOSITORY")
    path = Path(repo) / PROJECT_CONFIG
    if not path.is_file():
        raise _usage(f"{path} does not exist: there is nothing to trust")
    print(trust(path, revoke=args.revoke))
    if not args.revoke:
        try:
            load_config(repo)
        except ConfigError as exc:
            print(f"warning: {exc}", file=sys.stderr)
            return 1
    return 0


def cmd_hook(args: argparse.Namespace) -> int:
    from lamar_claude_code.hook import main

    return main(store_location(args), holdout=args.holdout)


def cmd_settle(args: argparse.Namespace) -> int:
    _integration()
    from lamar.cli.render import plural
    from lamar.cli.session import installed_commands, open_raw
    from lamar.engine import Lamar
    from lamar_claude_code.context import find_repo
    from lamar_claude_code.episodes import settle_all
    from lamar_claude_code.hook import paths_for

    repo = find_repo(os.getcwd())
    location, whose = _running_store(args, repo, installed_commands(repo))
    store = open_raw(location, create=False)
    print(f"store: {location}{whose}")  # cron starts outside the repository, whose own hooks it cannot see
    lines = settle_all(lambda: Lamar(store), paths_for(location))
    for line in lines:
        print(line)
    print(f"settled {plural(len(lines), 'outcome')}")
    return 0


def fast_hook(argv: list[str]) -> int:
    """`lamar claude-code hook [--store PATH] [--holdout Q]` without building the whole parser (it runs per prompt)."""
    try:
        from lamar_claude_code.hook import main
        from lamar_claude_code.quick import empty_store, homeless, named_holdout, store_of
    except ImportError:
        return 0  # fail open: nothing to inject without the integration
    store = store_of(argv, os.environ)
    refusal = empty_store(argv) or homeless(store)
    if refusal:  # no store to log beside: exit 1 is Claude Code's non-blocking error, shown to the user
        sys.stderr.write(refusal)
        return 1
    return main(store, holdout=named_holdout(argv))
