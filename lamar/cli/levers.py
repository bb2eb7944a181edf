"""The manual levers: `lamar add`, `edit`, `retire`, `revive`, `erase` and `report`.
Each is an event in the audit trail."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from lamar._errors import DuplicateReport, EventConflict, InvalidExperience, LamarError, advised
from lamar.cli.near_copy import near_copy_lines
from lamar.cli.observe import parse_pairs
from lamar.cli.render import dump_json, plural, scope_text, shorten
from lamar.cli.session import STORE_ENV, UsageError, open_engine, require_existing, resolve_id, store_source
from lamar.experience import Experience, Scope, Status
from lamar.lesson_file import Held, new_lessons, read_lessons
from lamar.program import program_name
from lamar.signals import Signal, to_reward

if TYPE_CHECKING:
    from lamar.engine import Lamar


def cmd_add(args: argparse.Namespace) -> int:
    lessons = _lessons_to_add(args)  # every lesson checked before the store is even opened
    location, hooks = store_source(args)
    if not args.create and not hooks:  # the store of Claude Code's hooks here is no typo: they make it anyway
        require_existing(location, f"check --store and ${STORE_ENV} for a typo, or pass --create "
                         "to start a new store there")
    lam = open_engine(args, create=True)
    ids: list[str] = []
    try:
        stored = lam.experiences()
        lessons, held = new_lessons(stored, lessons) if args.source else (lessons, [])
        for experience in lessons:
            ids.append(lam.add(experience))
        near = near_copy_lines(stored, zip(ids, lessons))
    except KeyboardInterrupt:
        if not args.source:
            raise
        # The lessons added so far stay; they are held now, so the same command skips them.
        raise KeyboardInterrupt(f"interrupted after adding {len(ids)} of the {plural(len(lessons), 'new lesson')} "
                                f"of {args.source}: run the same command again to add the rest (the lessons "
                                "already added are skipped)") from None
    finally:
        lam.close()
    for h in held:  # on stderr: stdout stays the new ids, for scripts
        print(f"{args.source}, line {h.lesson.provenance.get('line', 1)}: {_why_held(h)}; not added again",
              file=sys.stderr)
    if args.json:
        added = [{"id": i, "status": e.status.value, "scope": dict(e.scope)} for i, e in zip(ids, lessons)]
        dump_json(added if args.source else added[0])
    elif args.quiet:
        if ids:
            print("\n".join(ids))
    elif args.source:
        print(f"added {plural(len(ids), 'lesson')} from {args.source}"
              + (f" ({plural(len(held), 'lesson')} already held, listed above)" if held else ""))
        for exp_id, exp in zip(ids, lessons):
            print(f"  {exp_id}  line {exp.provenance['line']}: {shorten(exp.render(), 70)}")
    else:
        print(f"added {ids[0]} ({lessons[0].status.value}, scope {scope_text(lessons[0].scope)})")
    if near:  # under the line that names the new id, also when both streams go to one pipe
        sys.stdout.flush()
        print("\n".join(near), file=sys.stderr)
    return 0


def _why_held(held: Held) -> str:
    """Why `lamar add --from` skips a line, with the command that shows the lesson holding it."""
    if not held.stored:
        return f"the same lesson as line {held.by.provenance.get('line', 1)}"
    by = held.by
    return (f"lamar already holds this lesson as {by.id} ({by.status.value}; `{program_name()} "
            f"{'revive' if by.status is Status.RETIRED else 'show'} {by.id}`)")


def _lessons_to_add(args: argparse.Namespace) -> list[Experience]:
    """The one lesson of --precondition/--action, or every lesson of --from FILE (`-`: stdin)."""
    scope = parse_pairs(args.scope, "--scope")
    if args.source is None:
        if not (args.precondition and args.action):
            raise UsageError("lamar add needs --precondition and --action, or --from FILE to add many lessons "
                             "(`lamar add --help` shows both)")
        return [Experience(precondition=args.precondition, action=args.action, rationale=args.rationale,
                           scope=Scope(scope), status=args.status,
                           provenance={"source": "manual", "via": "lamar add"})]
    if args.precondition or args.action or args.rationale:
        raise UsageError("--from FILE takes the lessons from the file: leave out --precondition, --action "
                         "and --rationale (--scope and --status still apply to every lesson)")
    if args.source == "-":
        # Bytes, decoded here as a file is: stdin's own decoding would turn a stray byte into a
        # surrogate that the lesson check then explains in terms of Python.
        raw = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode("utf-8")
        try:
            text, name = raw.decode("utf-8"), "<stdin>"
        except UnicodeDecodeError:
            raise UsageError("--from - : stdin is not UTF-8 text") from None
    else:
        path = Path(args.source).expanduser()
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise UsageError(f"--from {args.source}: no such file") from None
        except UnicodeDecodeError:
            raise UsageError(f"--from {args.source} is not UTF-8 text") from None
        except OSError as exc:  # a folder, a file it may not read: what was typed, not the store
            raise UsageError(f"--from {args.source}: {exc.strerror or exc}; name a lesson file") from None
        name = path.name
    try:
        return read_lessons(text, name=name, scope=scope, status=args.status, via="lamar add --from")
    except LamarError as exc:
        from lamar.rules.sources import RULE_FILES

        if args.source == "-" or not (name in {Path(f).name for f in RULE_FILES} or name.endswith(".mdc")):
            raise
        import shlex  # a rules file's rules are written as the project's, not as "When X, Y" bullets

        raise UsageError(f"{exc}; {name} is a rules file: `{program_name()} import-rules --file "
                         f"{shlex.quote(args.source)}` reads each of its rules as written") from None


def cmd_edit(args: argparse.Namespace) -> int:
    """A new version of a lesson under the same id (`Lamar.edit`: its evidence restarts unless
    --keep-evidence, which only a wording fix of the precondition or the rationale may ask)."""
    # `*` is how `lamar ls` prints a scope with no field: the way to make a lesson eligible everywhere.
    scope = ({} if args.scope == ["*"] else parse_pairs(args.scope, "--scope")) if args.scope else None
    if args.precondition is None and args.action is None and args.rationale is None and scope is None:
        raise UsageError("lamar edit needs at least one of --precondition, --action, --rationale or --scope")
    lam = open_engine(args)
    try:
        exp_id = resolve_id(lam, args.id)
        try:
            edited = lam.edit(exp_id, precondition=args.precondition, action=args.action, rationale=args.rationale,
                              scope=scope, evidence="keep" if args.keep_evidence else "restart", reason=args.reason)
        except InvalidExperience as exc:  # retired: the engine's advice names its Python call; here, the command
            from lamar.edit import revive_first

            if exc.advice != revive_first(exp_id):
                raise
            how = f"`{program_name()} revive {exp_id}`"
            raise advised(InvalidExperience, str(exc).removesuffix(exc.advice), revive_first(exp_id, how)) from None
        except EventConflict:  # the engine's advice names its Python calls; here, the commands
            raise EventConflict(f"another writer edited lesson {exp_id} while this edit ran, so nothing of this "
                                f"edit was stored: see its text now with `{program_name()} show {exp_id}`, then "
                                f"run the `{program_name()} edit` again") from None
    finally:
        lam.close()
    version = edited.provenance["version"]
    kept = "kept" if args.keep_evidence else "restarted"
    if args.json:
        dump_json({**edited.to_dict(), "version": version, "evidence": kept})
    else:
        print(f"edited {exp_id} (version {version}, evidence {kept}): {shorten(edited.render(), 70)}")
    return 0


def cmd_retire(args: argparse.Namespace) -> int:
    exp_id, pulled = _pull(args, Status.RETIRED)
    print(f"retired {exp_id}: {args.reason}" if pulled else f"{exp_id} is already retired; nothing written")
    return 0


def cmd_revive(args: argparse.Namespace) -> int:
    exp_id, pulled = _pull(args, Status.ACTIVE)
    print(f"revived {exp_id} as active: {args.reason}" if pulled else f"{exp_id} is already active; nothing written")
    return 0


def cmd_erase(args: argparse.Namespace) -> int:
    lam = open_engine(args)
    try:
        exp_id = resolve_id(lam, args.id)
        erased = lam.erase(exp_id, contexts=args.contexts, by=args.by, reason=args.reason)
    finally:
        lam.close()
    if args.json:
        dump_json({"id": erased.id, "by": erased.by, "time": erased.time, "reason": erased.reason,
                   "episodes": list(erased.episodes), "events": erased.events, "again": erased.again})
        return 0
    if erased.again:
        print(f"{exp_id} was already erased (by {erased.by}); finished its cleanup: the saved state dropped and "
              f"{plural(erased.events, 'stored event')} scrubbed; no second erase event written")
        return 0
    what = "its text" + (f" and the contexts of {plural(len(erased.episodes), 'episode')}" if args.contexts else "")
    print(f"erased {exp_id}: {what} replaced in {plural(erased.events, 'stored event')}; "
          f"the lesson is retired, its evidence kept; recorded as erased by {erased.by}: {erased.reason}")
    return 0


def _pull(args: argparse.Namespace, status: Status) -> tuple[str, bool]:
    """Resolve the (possibly shortened) id and pull `lam.retire` or `lam.revive` on it, unless the
    lesson already has that status: a second pull would only add a misleading entry to its audit trail."""
    lam = open_engine(args)
    try:
        exp_id = resolve_id(lam, args.id)
        if lam.get(exp_id).status is status:
            return exp_id, False
        (lam.retire if status is Status.RETIRED else lam.revive)(exp_id, args.reason)
    finally:
        lam.close()
    return exp_id, True


def parse_signal(text: str) -> Signal | float:
    """A Signal name ('reverted') or a reward ('-0.5'), read as every entry point reads it (`to_reward`).

    >>> parse_signal("REVERTED"), parse_signal("-0.5")
    (<Signal.REVERTED: 'reverted'>, -0.5)
    """
    reward, named = to_reward(text)  # refused here, before the store is opened
    return named if named is not None else reward


def cmd_report(args: argparse.Namespace) -> int:
    try:
        signal = parse_signal(args.signal)
    except LamarError as exc:
        try:  # `lamar report shipped ep_...`: the words are right, their order is not
            parse_signal(args.episode)
        except LamarError:
            raise exc from None
        import shlex

        raise UsageError(f"{exc}; the episode id comes first: lamar report {shlex.quote(args.signal)} "
                         f"{shlex.quote(args.episode)}") from None
    lam = open_engine(args)
    try:
        replacing = args.replace and _has_outcome(lam, args.episode)
        lam.report(args.episode, signal, replace=args.replace)
    except DuplicateReport as exc:
        if not exc.advice:  # final (a checkpoint sealed it): --replace is refused the same way
            raise
        label = _label(signal)
        if _same_outcome(lam, args.episode, signal):  # a repeat (a hook run twice) has nothing to replace
            print(f"episode {args.episode} is already reported {label}: nothing to do")
            return 0
        import shlex

        raise UsageError(f"{str(exc).removesuffix(exc.advice)}; to replace that outcome: lamar report "
                         f"{shlex.quote(args.episode)} {shlex.quote(args.signal)} --replace") from None
    finally:
        lam.close()
    label = _label(signal)
    said = " (replacing the earlier outcome)" if replacing else " (it had no outcome: nothing replaced)"
    print(f"reported {args.episode}: {label}" + (said if args.replace else ""))
    return 0


def _label(signal: Signal | float) -> str:
    return signal.value if isinstance(signal, Signal) else f"reward {signal:+.2f}"


def _same_outcome(lam: Lamar, episode_id: str, signal: Signal | float) -> bool:
    """Whether the episode's outcome is the one reported again: a named signal by its name, a number
    by its value with no name (a number equal to a signal's reward is a different report)."""
    try:
        record = lam.episode(episode_id)
    except LamarError:
        return False
    if record.settled is not None:
        return False
    if isinstance(signal, Signal):
        return record.signal == signal.value
    return record.signal is None and record.reward == signal


def _has_outcome(lam: Lamar, episode_id: str) -> bool:
    """Whether `--replace` has an outcome to replace (a git hook passes it to every revert, reported or
    not); an id the store does not hold is left to `report`, which refuses it with its own message."""
    try:
        record = lam.episode(episode_id)
    except LamarError:
        return False
    return record.reward is not None or record.settled is not None
