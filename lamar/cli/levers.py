"""The manual levers: `lamar add`, `retire`, `revive` and `report`. Each is an event in the audit trail."""

from __future__ import annotations

import argparse

from lamar._errors import DuplicateReport, InvalidReward
from lamar.cli.observe import parse_pairs
from lamar.cli.render import dump_json, scope_text
from lamar.cli.session import UsageError, open_engine, resolve_id
from lamar.experience import Experience, Scope, Status
from lamar.signals import Signal


def cmd_add(args: argparse.Namespace) -> int:
    experience = Experience(
        precondition=args.precondition,
        action=args.action,
        rationale=args.rationale,
        scope=Scope(parse_pairs(args.scope, "--scope")),
        status=args.status,
        provenance={"source": "manual", "via": "lamar add"},
    )
    lam = open_engine(args, create=True)
    try:
        exp_id = lam.add(experience)
    finally:
        lam.close()
    if args.json:
        dump_json({"id": exp_id, "status": experience.status.value, "scope": dict(experience.scope)})
    elif args.quiet:
        print(exp_id)
    else:
        print(f"added {exp_id} ({experience.status.value}, scope {scope_text(experience.scope)})")
    return 0


def cmd_retire(args: argparse.Namespace) -> int:
    exp_id, pulled = _pull(args, "retire", Status.RETIRED)
    print(f"retired {exp_id}: {args.reason}" if pulled else f"{exp_id} is already retired; nothing written")
    return 0


def cmd_revive(args: argparse.Namespace) -> int:
    exp_id, pulled = _pull(args, "revive", Status.ACTIVE)
    print(f"revived {exp_id} as active: {args.reason}" if pulled else f"{exp_id} is already active; nothing written")
    return 0


def _pull(args: argparse.Namespace, lever: str, status: Status) -> tuple[str, bool]:
    """Resolve the (possibly shortened) id and pull `lam.retire` or `lam.revive` on it, unless the
    lesson already has that status: a second pull would only add a misleading entry to its audit trail."""
    lam = open_engine(args)
    try:
        exp_id = resolve_id([e.id for e in lam.experiences()], args.id, lam.store.location)
        if lam.get(exp_id).status is status:
            return exp_id, False
        getattr(lam, lever)(exp_id, args.reason)
    finally:
        lam.close()
    return exp_id, True


def parse_signal(text: str) -> Signal | float:
    """A Signal name ('reverted') or a reward ('-0.5'); bad values are left for the engine to refuse.

    >>> parse_signal("REVERTED"), parse_signal("-0.5")
    (<Signal.REVERTED: 'reverted'>, -0.5)
    """
    try:
        return Signal(text.strip().lower())
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        raise InvalidReward(
            f"unknown signal {text!r}: use one of {', '.join(s.value for s in Signal)} or a number in [-1, 1]"
        ) from None


def cmd_report(args: argparse.Namespace) -> int:
    signal = parse_signal(args.signal)
    lam = open_engine(args)
    try:
        lam.report(args.episode, signal, replace=args.replace)
    except DuplicateReport:
        earlier = lam.episode(args.episode)
        raise UsageError(f"episode {args.episode} was already reported ({earlier.signal or earlier.reward}); "
                         "pass --replace to replace that outcome") from None
    finally:
        lam.close()
    label = signal.value if isinstance(signal, Signal) else f"reward {signal:+.2f}"
    print(f"reported {args.episode}: {label}" + (" (replacing the earlier outcome)" if args.replace else ""))
    return 0
