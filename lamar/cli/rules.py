"""`lamar import-rules` and `lamar export-rules`: a project's CLAUDE.md / AGENTS.md rules as lessons, and back."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamar.cli.session import UsageError, open_engine, store_source

if TYPE_CHECKING:
    from lamar.rules import ImportPlan


def add_rules_commands(command: Callable[..., argparse.ArgumentParser]) -> None:
    """Register both commands with the parser's `command(name, help, handler)` factory."""
    found = command("import-rules", "one candidate lesson per rule of CLAUDE.md, AGENTS.md, .cursor/rules, "
                    "Copilot instructions; shows what it would add unless --apply", cmd_import_rules, json=True)
    found.add_argument("folder", nargs="?", default=".", help="the project folder (default: here)")
    found.add_argument("--file", nargs="+", metavar="FILE", action="extend", default=[],
                       help="read these files instead of the usual ones")
    found.add_argument("--project", help="the lessons' scope project (default: the git top-level folder's name)")
    found.add_argument("--model", metavar="PROVIDER:MODEL",
                       help="also restate rules written as prose (anthropic:MODEL, openai:MODEL or ollama:MODEL)")
    mode = found.add_mutually_exclusive_group()
    mode.add_argument("--dry-run", action="store_true", help="show what would be added (the default)")
    mode.add_argument("--apply", action="store_true", help="add the lessons")
    found.add_argument("--create", action="store_true", help="with --apply, create the store if it does not exist yet")

    out = command("export-rules", "write the lessons proven to help into a marked section of CLAUDE.md, "
                  "AGENTS.md or a .cursor/rules file; the rest of the file is left as it is", cmd_export_rules,
                  json=True)
    out.add_argument("--to", default="CLAUDE.md", metavar="FILE",
                     help="the file (default: CLAUDE.md; created when missing)")
    out.add_argument("--project", help="whose lessons (default: the git top-level folder's name of the file)")
    out.add_argument("--unproven", action="store_true", help="also list lessons with no verdict yet, apart")


def cmd_import_rules(args: argparse.Namespace) -> int:
    from lamar._errors import InvalidArgument
    from lamar.cli.session import STORE_ENV, UsageError, is_file_location, require_existing
    from lamar.engine import Lamar
    from lamar.rules import import_rules
    from lamar.rules.importing import CONDITION_KEYS, NAME_A_FILE

    _project(args)
    if args.create and not args.apply:
        raise UsageError("--create goes with --apply: a dry run writes nothing, so it creates no store")
    model = _model(args.model) if args.model else None
    # The store of the hooks of the folder read, not of the one the command runs in: rules kept in
    # another store would never be recalled by them, nor proven.
    location, hooks = store_source(args, args.folder)
    # As `lamar add`: a mistyped --store must not start a new store; the hooks' own store is no typo.
    if args.apply and not args.create and not hooks:
        require_existing(location, f"check --store and ${STORE_ENV} for a typo, or pass --create to start a "
                         "new store there")
    fresh = not args.apply and is_file_location(location) and not Path(location).expanduser().exists()
    # A dry run creates nothing: without a store there is nothing to dedupe against.
    with (Lamar(":memory:") if fresh else open_engine(args, create=bool(args.apply))) as lam:
        try:
            plan = import_rules(lam, args.folder, files=args.file, project=args.project, model=model,
                                apply=args.apply)
        except InvalidArgument as exc:  # the core's advice names its Python parameter; here it is --file
            if NAME_A_FILE not in str(exc):
                raise
            raise InvalidArgument(str(exc).replace(NAME_A_FILE, "name one with --file FILE")) from None
    if args.json:
        from lamar.cli.render import dump_json

        dump_json({"project": plan.project, "files": plan.files, "applied": plan.applied,
                   "lessons": [e.to_dict() for e in plan.lessons], "claude_reads": plan.claude_reads,
                   "skipped": [{"file": r.file, "line": r.line, "text": r.text, "why": why}
                               for r, why in plan.skipped]})
        return 0
    from lamar.cli.render import plural, shorten, visible

    verb = "added" if plan.applied else "would add"
    print(f"project {plan.project}: read {', '.join(plan.files)}")
    for exp in plan.lessons:
        # A rule its own condition narrows is recalled on fewer prompts than the rest: said here, not found out later.
        only = " and ".join(f"{key}={exp.scope[key]}" for key in CONDITION_KEYS if key in exp.scope)
        print(f"  {verb} {exp.id}  {exp.provenance['file']}:{exp.provenance['line']}  {visible(exp.render())}"
              + (f" (recalled only where {visible(only)})" if only else ""))
    for rule, why in plan.skipped:
        if rule.line == 0:  # a whole file
            print(f"  skipped {rule.file}  ({why})")
        else:
            print(f"  skipped {rule.file}:{rule.line}  ({why})  {shorten(visible(rule.text), 80)}")
    print(f"{plural(len(plan.lessons), 'lesson')} {'added' if plan.applied else 'to add'} "
          f"{'as a candidate' if len(plan.lessons) == 1 else 'as candidates'}, "
          f"{plural(len(plan.skipped), 'block')} skipped" + _next_step(plan, fresh, bool(hooks)))
    if {e.provenance.get("file") for e in plan.lessons} & set(plan.claude_reads):
        print(_still_read(plan.claude_reads, Path(args.folder)))
    return 0


def _still_read(files: list[str], folder: Path) -> str:
    """Claude Code keeps reading the rules files it loads itself, so a rule that recall holds out reaches
    Claude all the same: its control group sees it, and its evidence could never say whether it helps."""
    from lamar.rules.importing import project_root

    where = project_root(folder)
    # Excluding a file excludes what it @-imports, so only the files Claude Code looks for are named.
    roots = ", ".join(json.dumps(str(where / f)) for f in files if Path(f).name in ("CLAUDE.md", "CLAUDE.local.md"))
    return (f"note: Claude Code itself reads {', '.join(files)} into its sessions, so Claude sees these rules "
            "also on the prompts where Lamar holds them out, and their evidence cannot show whether they help. "
            "To test them, take them out of those files, or keep the files for others and list them in your "
            f"own .claude/settings.local.json: \"claudeMdExcludes\": [{roots}] (Claude Code then skips them and "
            "what they import, on this machine only)" + _not_ignored(where))


def _not_ignored(repository: Path) -> str:
    """How to keep the personal settings file out of git, when git would commit it: with the plugin no
    `lamar claude-code install` has listed it, and a file made by hand would carry this machine's paths."""
    import subprocess

    git = ["git", "-C", str(repository), "-c", "core.fsmonitor=false"]
    try:
        ignored = subprocess.run([*git, "check-ignore", "-q", "--no-index", ".claude/settings.local.json"],
                                 capture_output=True, timeout=10, check=False)
        if ignored.returncode != 1:  # 0: ignored already; 128: no repository, nothing to commit it
            return ""
        found = subprocess.run([*git, "rev-parse", "--git-path", "info/exclude"], capture_output=True, text=True,
                               timeout=10, check=True)
    except (OSError, subprocess.SubprocessError):
        return ""
    exclude = (repository / found.stdout.strip()).resolve()
    return (f"; git does not ignore .claude/settings.local.json here: add the line /.claude/settings.local.json "
            f"to {exclude}, so it is never committed")


def _next_step(plan: ImportPlan, fresh: bool, hooks: bool) -> str:
    """What to do after a dry run: --apply when it would add something, else why nothing is to add."""
    if plan.applied:
        return ""
    if plan.lessons and fresh and hooks:  # --apply makes the hooks' own store, as the hooks would
        return "; run again with --apply to add them (it creates the store the hooks use, which does not exist yet)"
    if plan.lessons:
        return (f"; run again with --apply{' --create' if fresh else ''} to add them"
                + (" (the store does not exist yet)" if fresh else ""))
    if any(why.startswith("already held") for _, why in plan.skipped):
        return "; nothing new to add: each rule is a lesson already or was skipped for the reason shown"
    return ("; nothing to add: a rule is a bullet or a short paragraph that directs (\"- Run `make test` before "
            "committing\"); each skipped block says why it is not one, and --model PROVIDER:MODEL restates prose")


def cmd_export_rules(args: argparse.Namespace) -> int:
    from lamar.rules import export_rules

    _project(args)
    if args.to == "-":  # unlike `lamar html --out -`, never stdout: the section is spliced into the file's text
        raise UsageError("--to -: export-rules rewrites one marked section of a rules file and keeps the rest, "
                         "so it needs the file: name it (e.g. --to CLAUDE.md; ./- for a file called -)")
    if not args.to:
        raise UsageError("--to is empty: name the rules file to write (e.g. --to CLAUDE.md)")
    if Path(args.to).expanduser().is_dir():
        raise UsageError(f"--to {args.to!r} is a folder: name the rules file to write (e.g. --to CLAUDE.md)")
    store_source(args, str(Path(args.to).expanduser().parent))  # the hooks of the file's project
    with open_engine(args) as lam:
        result = export_rules(lam, args.to, project=args.project, unproven=args.unproven)
    if args.json:
        print(json.dumps({"path": str(result.path), "helps": result.helps, "harms": result.harms,
                          "unknown": result.unknown, "changed": result.changed}, indent=2))
        return 0
    state = "updated" if result.changed else "unchanged"
    from lamar.cli.render import plural

    print(f"{result.path}: {state}; {plural(len(result.helps), 'rule')} proven to help, "
          f"{plural(len(result.harms), 'proposed removal')}"
          + (f", {len(result.unknown)} unproven" if args.unproven else ""))
    return 0


def _project(args: argparse.Namespace) -> None:
    if args.project is not None and not args.project.strip():
        raise UsageError("--project is empty: name the project (e.g. --project trace), or leave the flag out for "
                         "the git top-level folder's name")


def _model(spec: str) -> Any:
    from lamar.cli.session import UsageError
    from lamar.models import from_spec

    try:
        return from_spec(spec)
    except ValueError as exc:
        raise UsageError(f"--model: {exc}") from None


__all__ = ["add_rules_commands", "cmd_export_rules", "cmd_import_rules"]
