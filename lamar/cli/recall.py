"""`lamar recall`: the lessons for a context, logged as an episode; `--dry-run` shows what a recall
would choose and why, writing nothing."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from lamar._errors import LamarError
from lamar.cli.observe import parse_pairs
from lamar.cli.render import dump_json, interval, number, plural, scope_text, shorten
from lamar.cli.session import open_engine
from lamar.engine import Lamar
from lamar.preview import Preview
from lamar.program import program_name

_KEYS_SHOWN = 4


def cmd_recall(args: argparse.Namespace) -> int:
    context = parse_pairs(args.context, "the context")
    if args.quiet and (args.dry_run or args.json):
        other = "--dry-run" if args.dry_run else "--json"
        raise LamarError(f"--quiet prints the id of a logged episode: drop {other} or --quiet")
    lam = open_engine(args)
    try:
        if args.dry_run:
            seen = lam.preview(context, k=args.k)
            eligible = len(seen.lessons)
        else:
            rec = lam.recall(context, k=args.k)
            eligible = len(rec.eligible)
        unmatched = "" if eligible or args.json or args.quiet else out_of_scope(lam)
    finally:
        lam.close()
    if args.dry_run:
        if args.json:
            dump_json(preview_dict(seen))
        else:
            print_preview(seen)
            if unmatched:
                print(unmatched)
        return 0
    if args.json:
        dump_json({"episode_id": rec.episode_id, "context": dict(rec.context), "injected": rec.ids,
                   "held_out": list(rec.held_out), "eligible": list(rec.eligible),
                   "propensities": dict(rec.propensities), "prompt": rec.as_prompt()})
        return 0
    if args.quiet:
        # stdout is the id a script keeps (`episode=$(lamar recall -q ...)`); the lessons are data too, so they
        # are printed where `2>FILE` captures them for the agent's prompt, and nothing else joins them there.
        print(rec.episode_id)
        if rec.ids:
            print(rec.as_prompt(), file=sys.stderr)
        return 0
    print(f"episode {rec.episode_id}: {plural(len(rec.ids), 'lesson')} injected, "
          f"{len(rec.held_out)} held out, of {len(rec.eligible)} eligible (report it with `{program_name()} report`)")
    if unmatched:
        print(unmatched)
    if rec.ids:
        print(rec.as_prompt())
    return 0


def out_of_scope(lam: Lamar) -> str:
    """Why a context found no lesson in a store that holds some: one line naming their scopes'
    keys (never their text or values), or "" when every lesson is retired."""
    # A lesson with no scope is eligible everywhere, so with none eligible every one left is scoped.
    kept = [exp for exp in lam.experiences() if exp.status.value != "retired"]
    if not kept:
        return ""
    keys = sorted({key for exp in kept for key in exp.scope})
    shown = ", ".join(f"{key}=..." for key in keys[:_KEYS_SHOWN]) + (", ..." if len(keys) > _KEYS_SHOWN else "")
    return (f"0 of {len(kept)} unretired lessons are eligible: each is scoped ({shown}) and this context "
            "does not match; pass key=value")


def preview_dict(seen: Preview) -> dict[str, Any]:
    """The preview as JSON: the context, k, and each eligible lesson's standing."""
    return {"context": dict(seen.context), "k": seen.k, "draws": seen.draws, "logged": False,
            "lessons": [{"id": row.id, "text": row.text, "wanted": row.wanted, "chance": row.chance,
                         "cold": row.cold, "estimate": row.estimate, "holdout": row.holdout,
                         "verdict": row.verdict.value, "lower": row.lower, "upper": row.upper,
                         "randomized": row.randomized} for row in seen.lessons],
            "prompt": seen.as_prompt()}


def print_preview(seen: Preview) -> None:
    """One line per eligible lesson, the wanted ones first."""
    context = scope_text(seen.context)
    print(f"dry run for {context} (k={seen.k}): nothing logged; "
          f"{plural(len(seen.lessons), 'eligible lesson')}, chance over {seen.draws} draws")
    if not seen.lessons:
        return
    print(f"{'id':<20}  {'wanted':<6}  {'chance':>6}  {'estimate':>8}  {'coin':>5}  {'verdict':<7}  "
          f"{'interval':<16}  lesson")
    for row in seen.lessons:
        estimate = "cold" if row.cold else number(row.estimate, 2)
        print(f"{row.id:<20}  {'yes' if row.wanted else 'no':<6}  {row.chance:>6.0%}  {estimate:>8}  "
              f"{row.holdout:>5.0%}  {row.verdict.value:<7}  {interval(row.lower, row.upper):<16}  "
              f"{shorten(row.text, 60)}")
    wanted = sum(row.wanted for row in seen.lessons)
    print(f"a recall would inject {plural(wanted, 'lesson')} unless a coin holds one out "
          "(coin: the chance a wanted lesson is held out for the evidence)")
