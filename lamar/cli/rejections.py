"""`lamar rejections`, and the store's record of the noes `lamar review` and `lamar apply` carry."""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence

from lamar._errors import LamarError
from lamar.cli.render import dump_json, plural, shorten
from lamar.cli.session import UsageError, open_engine
from lamar.engine import Lamar
from lamar.program import program_name
from lamar.sleep.printed import printed_id, printed_reason
from lamar.sleep.proposals import SleepReport

_UNITS = {"retire": "randomized episodes", "promote": "randomized episodes", "narrow": "randomized episodes",
          "candidate": "sessions", "compact": "episodes to fold", "retire_dropped": "episodes unchosen"}


def remember(lam: Lamar | None, report: SleepReport, rejected: Sequence[str], approved: Sequence[str] = (), *,
             later: str | None = None) -> str:
    """Have the store remember these noes (and forget a no now turned into a yes): what was done, in
    words, or "" when nothing changed. A store that cannot say leaves the decisions in the report file
    alone, and says so, with `later` (what records them then). An id edited by hand, which cannot name a
    record, is said and passed over: it must not cost the others theirs."""
    return remembered(lam, report, rejected, approved, later=later)[0]


def remembered(lam: Lamar | None, report: SleepReport, rejected: Sequence[str], approved: Sequence[str] = (), *,
               later: str | None = None) -> tuple[str, list[str]]:
    """`remember`'s words, and the ids of the rejections the store recorded now (for `lamar apply --json`)."""
    from lamar._errors import InvalidReport

    later = later or f"`{program_name()} apply` records them"
    if not (rejected or approved):
        return "", []
    if lam is None:  # the store could not be opened: the report file holds the decisions
        return f"(the store did not record the rejections: it was unavailable; {later})", []
    recorded: list[str] = []
    said = []
    try:
        held = {p.id for p in report.proposals}
        for pid in dict.fromkeys(pid for pid in rejected if pid in held):
            try:
                recorded += lam.reject(report, [pid])
            except InvalidReport as exc:  # no store would take it: `later` would fail the same way
                said.append(f"not remembered: {exc}")
        undone = [r for pid in approved for r in lam.unreject(pid)]
    except LamarError as exc:
        return "; ".join([*said, f"(the store did not record the rejections: {exc}; {later})"]), recorded
    if recorded:
        said.insert(0, f"{plural(len(recorded), 'rejection')} remembered: sleep leaves "
                    f"{'it' if len(recorded) == 1 else 'them'} out until what it rests on changes "
                    "(lamar rejections lists them)")
    if undone:
        said.append(f"{plural(len(undone), 'rejection')} undone: sleep may propose it again")
    return "; ".join(said), recorded


def cmd_rejections(args: argparse.Namespace) -> int:
    """List the rejections sleep honours, or undo one (`--undo PROPOSAL`)."""
    lam = open_engine(args)
    try:
        if args.undo is not None:
            undone = lam.unreject(args.undo)
            if not undone:
                raise UsageError(f"no rejection of {printed_id(args.undo)} is in force: "
                                 f"`{program_name()} rejections` lists those that are")
            if args.json:
                dump_json({"undone": [r.to_dict() for r in undone]})
            else:
                print(f"undone: {', '.join(printed_id(r.proposal) for r in undone)}; the next sleep may propose "
                      f"{'it' if len(undone) == 1 else 'them'} again")
            return 0
        held = lam.rejections()
    finally:
        lam.close()
    if args.json:
        dump_json([r.to_dict() for r in held])
        return 0
    if not held:
        print("no rejection in force: sleep proposes everything it finds")
        return 0
    print(f"{plural(len(held), 'rejection')} in force; sleep leaves each out until what it rests on changes")
    for r in held:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(r.time)) if r.time is not None else "before a checkpoint"
        kind = r.kind or ("compact" if r.proposal == "compact" else "")
        rests = "its lessons' texts" if r.count is None else f"{r.count} {_UNITS.get(kind, '(count)')}"
        print(f"  {printed_id(r.proposal):<28} {kind or '?':<13} {when}  rested on {rests}")
        if r.lessons:
            print(f"    lessons: {', '.join(map(printed_id, r.lessons))}")
        if r.reason:
            print(f"    {shorten(printed_reason(r.reason), 100)}")
    print("undo one (sleep may propose it again): lamar rejections --undo PROPOSAL")
    return 0


__all__ = ["cmd_rejections", "remember", "remembered"]
