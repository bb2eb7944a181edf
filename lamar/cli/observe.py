"""`lamar stats` and `lamar ls`: what the agent believes now, read without writing."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from lamar.cli.pairs import one_value_each
from lamar.cli.render import dump_json, filled, interval, lesson_line, lift, plural, scope_text, shorten, size
from lamar.cli.session import UsageError, backend_name, open_engine, store_bytes
from lamar.engine import Lamar
from lamar.experience import Experience
from lamar.policy.dropped import DROP_MARGIN
from lamar.policy.verdicts import Evidence
from lamar.program import program_name
from lamar.store.base import folded_rows


def parse_pairs(pairs: list[str] | None, option: str) -> dict[str, str]:
    """['project=trace', 'language=swift'] -> {'project': 'trace', 'language': 'swift'}."""
    parsed: list[tuple[str, str]] = []
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            example = "lamar recall" if option == "the context" else option
            raise UsageError(f"{option} takes key=value pairs, like {example} project=trace; got {pair!r}")
        parsed.append((key.strip(), value))
    return one_value_each(parsed, option)


def unknown_keys(lam: Lamar, scope: Mapping[str, str]) -> str:
    """When a --scope matched nothing and names a key no lesson's scope has (`Project` for `project`):
    the keys they have, as `lamar recall` names them (never their values), else ""."""
    keys = sorted({key for exp in lam.experiences() for key in exp.scope})
    if not keys or set(scope) <= set(keys):
        return ""
    shown = ", ".join(keys[:8]) + (", ..." if len(keys) > 8 else "")
    return f" (no lesson is scoped by {', '.join(sorted(set(scope) - set(keys)))}; their scopes' keys: {shown})"


def holdout_cost(evidence: Mapping[str, Evidence], reports: int) -> dict[str, float]:
    """Reward given up by holding lessons out: held-out count x measured lift, where the lift is positive.

    It is an estimate: the lift is the ledger's point estimate, and lessons with a negative
    lift count zero (holding them out gained reward; that gain is not netted off), as do lessons whose
    lift is not measured yet (`Evidence.measured`): a few episodes' average can sit anywhere in [-2, 2].
    """
    total = sum(ev.held_out * max(ev.lift, 0.0) for ev in evidence.values() if ev.measured)
    return {"total": total, "per_report": total / reports if reports else 0.0}


def collect_stats(lam: Lamar) -> dict[str, Any]:
    """`Lamar.stats()` plus the holdout's estimated cost and the store's size."""
    from lamar.cli.last_sleep import last_sleep

    stats = lam.stats()
    evidence = {e.id: lam.evidence(e.id) for e in lam.experiences()}
    location = lam.store.location
    return {
        **stats,
        "backend": backend_name(location),
        "bytes": store_bytes(location),
        "unreported_share": stats["unreported"] / stats["episodes"] if stats["episodes"] else 0.0,
        "holdout_cost": holdout_cost(evidence, stats["reports"]),
        "last_sleep": last_sleep(location, lam.store),  # None: no `lamar sleep` recorded for this store
    }


def cmd_stats(args: argparse.Namespace) -> int:
    lam = open_engine(args)
    try:
        data = collect_stats(lam)
        holdout = lam.policy.holdout
    finally:
        lam.close()
    if args.json:
        dump_json(data)
        return 0
    status = data["by_status"]
    verdict = data["by_verdict"]
    on_disk = f", {size(data['bytes'])}" if data["bytes"] is not None else ""
    live = sum(verdict.values())
    cost = data["holdout_cost"]
    # The fold mode's seqs come from one SEQUENCE that every namespace of the database shares: its last seq is no
    # count of this store's events, and counting them would read the whole log, so the line says what the number is.
    shared = f"newest seq {data['events']}, numbered database-wide: not a count"
    events = shared if folded_rows(lam.store) is not None else plural(data['events'], 'event')
    print(f"store      {data['store']} ({data['backend']}{on_disk}, {events})")
    print(f"lessons    {data['experiences']}: " + ", ".join(f"{n} {s}" for s, n in status.items()))
    print(f"verdicts   {verdict['helps']} helps, {verdict['harms']} harms, {verdict['unknown']} unknown "
          f"(of the {live} not retired)")
    if live and not verdict["helps"] and not verdict["harms"]:
        print(_no_proof_yet(holdout, data["store"]))
    print(f"episodes   {data['episodes']}: {data['reports']} reported, {data['unreported']} never reported "
          f"({data['unreported_share']:.1%})")
    print(f"holdout    {data['holdout_rate']:.1%} of wanted lessons withheld; estimated cost "
          f"{cost['per_report']:.4f} reward per reported episode ({cost['total']:.2f} in all)")
    from lamar.cli.last_sleep import mined_nothing, sleep_lines

    for name, line in zip(("sleep", "mining"), sleep_lines(data["last_sleep"])):
        print(f"{name:<10} {line}")
    if mined_nothing(data["last_sleep"]):  # the turns Claude Code's hooks traced may wait for a model
        from lamar.cli.unmined import unmined_traces

        if unmined := unmined_traces(data["store"]):  # the command on a line of its own, whole, to copy
            print(filled(f"{unmined[0]}:", 113, f"{'mining':<10} ", " " * 11) + f"\n{' ' * 11}{unmined[1]}")
    return 0


def _no_proof_yet(holdout: float, store: str) -> str:
    """What a store with no verdict yet can expect, under the verdicts line: a young store reads as broken."""
    from lamar.policy.config import SOONER, Policy, holdout_lever

    volume = '(docs/gym.md, "What a project can expect: volume")'
    if holdout <= 0:
        said = f"none proven yet: at holdout={holdout:g} no coin is flipped, so none ever will be {volume}"
    else:
        when = ("a solo store's first proofs take a year or more (a team's, weeks)" if holdout == Policy().holdout
                else "a proof costs a lesson about 220 held-out episodes")
        sooner = (f"; a higher holdout ({holdout_lever(store=store)}) proves sooner, at the reward the held-out "
                  "episodes give up") if holdout < SOONER else ""
        said = (f"none proven yet, as expected in a young store: at holdout={holdout:g} {when}, and the selection "
                f"already favours what helps{sooner} {volume}")
    return filled(said, 113, " " * 11, " " * 11)


def cmd_ls(args: argparse.Namespace) -> int:
    scope = parse_pairs(args.scope, "--scope")
    rows, unknown = lesson_rows(args, scope, lambda lam: lam.experiences(status=args.status, verdict=args.verdict,
                                                                           scope=scope or None))
    if args.json:
        dump_lessons(rows)
        return 0
    if not rows:
        if scope or args.status or args.verdict:
            print("no lessons match" + unknown)
        else:  # most first lessons come from the rules files a repository already has
            import os
            import shlex

            from lamar.projects import project_of

            where = f" --store {shlex.quote(str(args.store))}" if getattr(args, "store", None) else ""
            # A lesson with no scope is recalled in every project, so the one written by hand is scoped as the
            # imported rules are, to the project the hooks and import-rules name from this folder (in / or the
            # home folder outside git they name none: the user names it).
            project = shlex.quote(f"project={project_of(os.getcwd()) or 'NAME'}")
            lamar = program_name()  # the one the shell runs: a full path when `lamar` is not on PATH
            print(f"no lessons yet: `{lamar} import-rules{where}` shows the rules of this repository's CLAUDE.md or "
                  f"AGENTS.md as lessons (add --apply to keep them); `{lamar} add{where} --precondition .. --action .. "
                  f"--scope {project}` writes one by hand for this project (without --scope, for every project)")
        return 0
    print_lessons(rows, args.width)
    return 0


def lesson_rows(args: argparse.Namespace, scope: Mapping[str, str], pick: Callable[[Lamar], list[Experience]]
                ) -> tuple[list[tuple[Experience, Evidence]], str]:
    """The lessons `pick` chooses in the store `args` names, each with its evidence, and, when there
    are none, what `unknown_keys` says of `scope` (`lamar ls` and `lamar search`)."""
    lam = open_engine(args)
    try:
        rows = [(exp, lam.evidence(exp.id)) for exp in pick(lam)]
        return rows, unknown_keys(lam, scope) if not rows else ""
    finally:
        lam.close()


def dump_lessons(rows: Sequence[tuple[Experience, Evidence]]) -> None:
    """The JSON of `lamar ls --json` (and `lamar search --json`): each lesson with its evidence."""
    dump_json([{**exp.to_dict(), "evidence": ev.to_dict()} for exp, ev in rows])


def print_lessons(rows: Sequence[tuple[Experience, Evidence]], width: int) -> None:
    """The table of `lamar ls` (and `lamar search`): one line per lesson, its text cut to `width`."""
    scopes = [shorten(scope_text(exp.scope), 32) for exp, _ in rows]
    column = max(5, *map(len, scopes))
    print(f"{'id':<20}  {'status':<9}  {'verdict':<7}  {'lift':>6}  {'interval':<16}  {'inj':>5}  {'held':>5}  "
          f"{'scope':<{column}}  lesson")
    for (exp, ev), scope_shown in zip(rows, scopes):
        print(f"{exp.id:<20}  {exp.status.value:<9}  {ev.verdict.value:<7}  {lift(ev.lift, ev.lower, ev.upper):>6}  "
              f"{interval(ev.lower, ev.upper):<16}  {ev.injected:>5}  {ev.held_out:>5}  "
              f"{scope_shown:<{column}}  {lesson_line(exp, width)}")
    dropped = [exp.id for exp, ev in rows if exp.status.value != "retired" and ev.dropped]
    if dropped:  # their verdict reads unknown like any other's: what else is known is said here
        print(f"\ndropped by the selection (its estimate of the lift is below -{DROP_MARGIN:g}, so it is rarely "
              f"chosen; harm is not proven): {', '.join(dropped)}; `lamar show ID` says since when")
