"""`lamar sleep`, `lamar review` and `lamar apply`: propose, let a person decide, carry out."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamar._errors import InvalidArgument, LamarError, ModelError, echoed
from lamar.cli.mined import dropped_lines, support_line
from lamar.cli.outputs import check_output, is_sleep_report
from lamar.cli.rejections import remember, remembered
from lamar.cli.render import dump_json, known_interval, lift, plural, shorten
from lamar.cli.report_file import load_report, report_held, save_report
from lamar.cli.report_store import note_store, read_made_from
from lamar.cli.session import UsageError, open_engine
from lamar.cli.warned import held_lines, hold_warned
from lamar.engine import Lamar
from lamar.program import program_name
from lamar.sleep.kinds import describe
from lamar.sleep.printed import printed_id, printed_reason, report_lacks
from lamar.sleep.proposals import Proposal, SleepReport, already_applied, skip_code
from lamar.sleep.warned import warning_line

if TYPE_CHECKING:
    from lamar.sleep.traces import Trace

def check_traces(paths: Sequence[str]) -> None:
    """Refuse a --traces path that is not a JSON Lines file, saying what it is instead."""
    for path in paths:
        found = Path(path)
        if found.is_file():
            continue
        if found.is_dir():
            raise UsageError(f"{path} is a folder; --traces takes a JSON Lines file of traces")
        if found.exists():  # a device, a pipe or a socket: no file of traces to read
            raise UsageError(f"{path} is not a regular file; --traces takes a JSON Lines file of traces")
        from lamar.cli.claude_code import no_traces_yet

        raise UsageError(no_traces_yet(path) or f"no trace file {path}: pass a JSON Lines file of traces")


def read_traces(paths: Sequence[str]) -> list[Trace]:
    """The traces of each --traces file in turn. Each is read on its own, so a bad line's error names its
    own file and line, and a last line cut off in one file never runs into the next one's first."""
    from lamar.sleep.traces import load_traces

    return [trace for path in paths for trace in load_traces(path)]


def cmd_sleep(args: argparse.Namespace) -> int:
    if bool(args.traces) != bool(args.model):
        raise UsageError("mining lessons needs both --traces FILE.jsonl and --model PROVIDER:MODEL "
                         "(without either, sleep only consolidates the store)")
    if args.max_model_calls is not None and not args.model:
        raise UsageError("--max-model-calls caps the model calls of mining, which needs --traces FILE.jsonl and "
                         "--model PROVIDER:MODEL")
    to_stdout = args.out == "-"  # as `lamar html --out -`; `./-` names a file called "-"
    if args.out is not None and not to_stdout:
        check_output(args.out, ours=is_sleep_report, what="the sleep report", force=args.force)
    traces = model = None
    if args.traces:
        check_traces(args.traces)
        from lamar.models import from_spec

        try:  # before the traces: a typo or a missing key is said without reading a large file first
            model = from_spec(args.model)
        except ValueError as exc:
            raise UsageError(f"--model: {exc}") from None
        traces = read_traces(args.traces)
    import logging

    from lamar.cli.last_sleep import figures_kept, keep_figures
    from lamar.last_sleep import recorded_by_caller
    from lamar.sleep.mining import FAILED

    def said_below(record: logging.LogRecord) -> bool:  # the `lamar: error:` line at the end says it
        return record.msg != FAILED

    mining = logging.getLogger("lamar.sleep.mining")
    lam = open_engine(args)
    mining.addFilter(said_below)
    try:
        # Every proposal: the file and --json hold them all, and the lines below count the applied ones.
        with recorded_by_caller():  # once, below, naming the report it is saved to
            report = lam.sleep(traces=traces, model=model, max_model_calls=args.max_model_calls,
                               include_applied=True)
        done = _applied_now(lam, report) if report.proposals and not to_stdout else []
        location = lam.store.location
    finally:
        mining.removeFilter(said_below)
        lam.close()
    data = report.to_dict()
    note_store(data, location)  # review and apply read that store when none is named
    if to_stdout:  # the report alone, as `--out FILE` saves it: a redirect makes a file review takes
        dump_json(data)
        keep_figures(location, report, args.out)
        _mining_failed(report, args.out)
        return 0
    with figures_kept(location, report, args.out):  # once the report is saved: its figures point to it
        if args.out is not None:
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            with report_held(args.out):  # not amid a review's write-back, which would put the old one back
                save_report(args.out, data)  # every proposal: review and apply check the store themselves
    if args.json:  # the whole report, as saved, and which of its proposals a script can pass over
        dump_json({**data, "already_applied": done})  # None: the store could not say
        _mining_failed(report, args.out)
        return 0
    listed = [p for p in report.proposals if p.id not in (done or ())]
    print(f"{plural(len(listed), 'proposal')}, {len(report.dropped)} dropped")
    mined = (data.get("summary") or {}).get("mining") or {}
    if mined.get("traces") and report.mining_error:  # the error line below says why
        print(f"  mining {plural(mined['traces'], 'trace')} failed after "
              f"{plural(mined.get('model_calls', 0), 'model call')}: no lesson was mined")
    elif mined.get("traces"):
        print(f"  mined {plural(mined['traces'], 'trace')} in {plural(mined.get('model_calls', 0), 'model call')}: "
              f"{plural(mined.get('candidates', 0), 'candidate lesson')}")
    elif not args.traces:
        from lamar.cli.unmined import unmined_traces

        if unmined := unmined_traces(location, args.out):
            print(f"  {unmined[0]}: {unmined[1]}")
    for proposal in listed:
        print(f"  {proposal.id:<26}  {shorten(proposal.reason, 90)}")
        if warned := warning_line(proposal):
            print(f"    {warned}")
    for dropped in report.dropped:
        print("\n".join(dropped_lines(dropped)))
    if done:  # counted, so that nothing is left out unsaid
        print(f"{plural(len(done), 'proposal')} already applied, not listed")
    if rejected := report.summary.get("rejected"):
        print(f"{plural(len(rejected), 'rejected proposal')} left out (lamar rejections lists them)")
    if args.out is not None and not listed and (done or rejected):  # review would only name them as applied
        what = " or ".join(w for w, n in (("is already applied", done), ("was rejected", rejected)) if n)
        print(f"saved to {args.out}; nothing to review or apply: every proposal {what}")
    elif args.out is not None and not listed:  # review and apply would only say there is nothing to do
        print(f"saved to {args.out}; nothing to review or apply: no lesson has the evidence or the twin a "
              "proposal needs yet (run sleep again as outcomes come in)")
    elif args.out is not None:
        lamar = program_name()  # the one the shell runs: a full path when `lamar` is not on PATH
        print(f"saved to {args.out}; next: {lamar} review {args.out}, then {lamar} apply {args.out}")
    elif listed:
        print("nothing saved: pass --out REPORT.json to review and apply these")
    _mining_failed(report, args.out)
    return 0


def _applied_now(lam: Lamar, report: SleepReport) -> list[str] | None:
    """The report's proposals the store holds as applied (None: the store could not say). Sleep proposes an
    acknowledged contradiction again every night, by the same id: nothing is left to decide about it. Which
    those are is a courtesy, as in `lamar review`: a store that fails to say must not cost the report."""
    try:
        return already_applied(report, lam.would_skip(report))
    except LamarError as exc:
        print(f"(store unavailable, every proposal listed, applied or not: {exc})", file=sys.stderr)
        return None


def _mining_failed(report: SleepReport, out: str | None) -> None:
    """Exit 2 when the model failed, once the proposals that need no model are out."""
    if report.mining_error:
        where = "the report on stdout holds" if out == "-" else f"{out} holds" if out is not None else "above are"
        raise ModelError(f"mining failed, no lesson was mined ({report.mining_error}); {where} the "
                         "proposals that need no model")


def _describe(proposal: Proposal, lam: Lamar | None) -> list[str]:
    # What apply would do, from the same fields apply acts on (see lamar.sleep.kinds).
    lines = [f"  reason: {printed_reason(proposal.reason)}", *describe(proposal)]
    for exp_id in proposal.experience_ids:
        text, shown = "", printed_id(exp_id)
        if lam is not None:
            try:
                exp = lam.get(exp_id)
                was = (proposal.evidence.get(exp_id) or {}).get("version")
                # The text shown is the lesson's now: say so when the report judged another version.
                edited = f", version {exp.version} now, judged at version {was}" \
                    if isinstance(was, int) and was != exp.version else ""
                text = f" ({exp.status.value}{edited}) {shorten(exp.render(), 80)}"
            except LamarError:  # the lesson a candidate adds, or a hand-edited id: shown as refusals show it
                lesson = proposal.payload.get("experience") if proposal.kind == "candidate" else None
                adds = isinstance(lesson, Mapping) and lesson.get("id") == exp_id
                text, shown = (" (not stored yet: apply adds it)", printed_id(exp_id)) if adds else \
                    (" (not in this store)", echoed(exp_id))
        lines.append(f"  lesson {shown}{text}")
        ev = proposal.evidence.get(exp_id)
        if isinstance(ev, Mapping) and "traces" in ev and "verdict" not in ev:
            lines.append(support_line(ev))  # a mined lesson has no arm yet: its sessions are its support
        elif isinstance(ev, Mapping) and ev:
            lines.append(f"    evidence when proposed: {ev.get('verdict')}, "
                         f"lift {lift(ev.get('lift'), ev.get('lower'), ev.get('upper'))}, "
                         f"interval {known_interval(ev.get('lower'), ev.get('upper'))}, "
                         f"{ev.get('randomized', 0)} randomized, {ev.get('injected', 0)} injected")
        slices = ev.get("slices") if isinstance(ev, Mapping) else None
        for name, s in (slices.items() if isinstance(slices, Mapping) else ()):
            if isinstance(s, Mapping):  # the evidence of each slice of the context (docs/context.md)
                lines.append(f"      where {printed_id(name)}: {s.get('verdict')}, "
                             f"lift {lift(s.get('lift'), s.get('lower'), s.get('upper'))}, "
                             f"interval {known_interval(s.get('lower'), s.get('upper'))}, "
                             f"{s.get('randomized', 0)} randomized")
    return lines


def _ask(prompt: str) -> str:
    """'y', 'n' or 'q'; end of input counts as quit."""
    while True:
        sys.stdout.write(prompt)
        sys.stdout.flush()
        line = sys.stdin.readline()
        if not line:
            sys.stdout.write("\n")
            return "q"
        answer = line.strip().lower()[:1]
        if answer in ("y", "n", "q"):
            return answer
        sys.stdout.write("please answer y (approve), n (reject) or q (stop and save)\n")


def cmd_review(args: argparse.Namespace) -> int:
    """Ask a person about each undecided proposal and write the decisions into the report file
    itself, as two lists of proposal ids next to the proposals: "approved" and "rejected"."""
    data = load_report(args.report, redo=args.again)
    report = SleepReport.from_dict(data)
    read_made_from(args, data, args.report)
    approved, rejected = list(data.get("approved", [])), list(data.get("rejected", []))
    # With --again every proposal is asked; each keeps its earlier decision until it is answered
    # anew, so quitting part-way loses nothing.
    pending = [p for p in report.proposals if args.again or (p.id not in approved and p.id not in rejected)]
    lam: Lamar | None = None
    skips: dict[str, str] = {}  # what apply would skip now, and why: apply's own check
    if pending:
        try:
            lam = open_engine(args)
            skips = lam.would_skip(report)
        # The lessons' text is a courtesy; the ids and evidence are in the report.
        except (LamarError, OSError, ImportError) as exc:
            print(f"(store unavailable, showing ids only: {exc})", file=sys.stderr)
    # Applied is a fact of the store, whoever applied it: nothing is left to decide about it.
    done = already_applied(report, skips)
    pending = [p for p in pending if p.id not in done]
    answered: dict[str, str] = {}  # this review's answers, by proposal id
    said = ""
    try:
        if lacks := report_lacks(report):
            print(lacks)
        if done:
            print(f"already applied, not asked: {', '.join(map(printed_id, done))}")
        if not report.proposals:
            print(f"nothing to review in {args.report}: it holds no proposal; for new ones, "
                  f"{program_name()} sleep --out {args.report}")
            return 0
        if not pending and len(done) == len(report.proposals):  # --again would ask nothing either
            print(f"nothing to review in {args.report}: every proposal in it is applied; for new ones, "
                  f"{program_name()} sleep --out {args.report}")
            return 0
        if not pending:
            print(f"nothing to review in {args.report} ({len(approved)} approved, {len(rejected)} rejected; "
                  "--again reviews every proposal afresh)")
            return 0
        for i, proposal in enumerate(pending, 1):
            print(f"\n[{i}/{len(pending)}] {printed_id(proposal.kind)} {printed_id(proposal.id)}")
            shown = _describe(proposal, lam)
            print("\n".join(shown))
            why = skips.get(proposal.id, "")
            said = printed_reason(why)  # its words may quote what the report's edit put there
            if why and skip_code(why) == "stale":
                print(f"  STALE: apply would skip it ({said}); `{program_name()} sleep --out {args.report}` makes a "
                      "fresh report")
            elif why and skip_code(why) == "refused" and not any("REFUSED by apply" in line for line in shown):
                # Describe marks a malformed proposal; the store's check refuses others (an edited expect).
                print(f"  REFUSED by apply: {said.removeprefix('refused: ')}")
            answer = _ask("approve? [y]es / [n]o / [q]uit: ")
            if answer == "q":
                break
            approved, rejected = ([i for i in decided if i != proposal.id] for decided in (approved, rejected))
            (approved if answer == "y" else rejected).append(proposal.id)
            answered[proposal.id] = "approved" if answer == "y" else "rejected"
        said = remember(lam, report, [i for i, d in answered.items() if d == "rejected"],
                        [i for i, d in answered.items() if d == "approved"])
    finally:
        if lam is not None:
            lam.close()
    order = [p.id for p in report.proposals]
    data["approved"] = [pid for pid in order if pid in approved]
    data["rejected"] = [pid for pid in order if pid in rejected]
    with report_held(args.report):  # what another writer saved is read, and kept, before this is saved
        data = _over_decisions_since(args.report, data, answered)
        data["reviewed"] = time.time()
        save_report(args.report, data)
    decided = set(data["approved"]) | set(data["rejected"])
    # An applied proposal is settled: counted apart, never as one still to decide.
    left = sum(1 for p in report.proposals if p.id not in decided and p.id not in done)
    settled = sum(1 for pid in done if pid not in decided)
    applied = f", {settled} already applied" if settled else ""
    print(f"\n{len(data['approved'])} approved, {len(data['rejected'])} rejected, {left} undecided{applied}; "
          f"saved in {args.report}. Next: {program_name()} apply {args.report}" + (f"\n{said}" if said else ""))
    return 0


def _over_decisions_since(path: str, data: dict[str, Any], answered: Mapping[str, str]) -> dict[str, Any]:
    """The report as the file holds it now, with this review's answers over its decisions: an
    approval made meanwhile in `lamar ui` (or another review) on a proposal not answered here stays,
    where writing the report as it was read would drop it. A file that cannot be read now gets `data`."""
    try:
        now = load_report(path)
    except UsageError:
        return data
    order = [p["id"] for p in now.get("proposals", []) if isinstance(p, Mapping) and isinstance(p.get("id"), str)]
    decided = {i: "approved" for i in now.get("approved", [])} | {i: "rejected" for i in now.get("rejected", [])}
    decided |= {i: d for i, d in answered.items() if i in order}
    lost = [i for i in answered if i not in order]
    if lost:  # `lamar sleep --out` wrote a new report there meanwhile: its decisions are its own
        print(f"{plural(len(lost), 'answer')} not saved: {path} holds another report now (saved by `lamar sleep` "
              f"while this review ran); run {program_name()} review {path} for it", file=sys.stderr)
    now["approved"] = [i for i in order if decided.get(i) == "approved"]
    now["rejected"] = [i for i in order if decided.get(i) == "rejected"]
    return now


def _proposals_named(report: SleepReport, given: list[str]) -> list[str]:
    """The proposal ids `--only` names: each id itself or the start of one, as lesson ids are taken; a
    text no id starts with is passed on as given, for apply to list as not in the report."""
    from lamar.listing import named

    ids = [p.id for p in report.proposals]
    try:
        return [named(ids, text, what="proposal") or text for text in given]
    except InvalidArgument as exc:
        raise UsageError(str(exc)) from None


def cmd_apply(args: argparse.Namespace) -> int:
    """Carry out the report's approved proposals only (those `--only` names, when given); a report
    that was never reviewed (no "approved" list) is applied in full."""
    data = load_report(args.report)
    report = SleepReport.from_dict(data)
    read_made_from(args, data, args.report)
    only: list[str] | None = _proposals_named(report, args.only) if args.only else None
    if only is None and ("approved" in data or "rejected" in data):
        # A rejected proposal is never applied unless --only names it, even with no "approved" list.
        rejected = set(data.get("rejected", []))
        only = list(data["approved"]) if "approved" in data else [p.id for p in report.proposals
                                                                    if p.id not in rejected]
    lam = open_engine(args) if only or only is None or data.get("rejected") else None
    try:
        said, recorded = remembered(lam, report, [] if args.only else data.get("rejected", []),  # noes, as yeses
                                    later=f"run `{program_name()} apply` again to record them")
        # Said to a script as the rejections `lamar rejections` lists, only when some were recorded now.
        noes = {"rejections_recorded": recorded} if recorded else {}
        if lam is None or not only and only is not None:
            if args.json:
                dump_json({"applied": [], "skipped": [], **noes})
            else:
                print(f"no proposal in {args.report} was approved; nothing applied" + (f"\n{said}" if said else ""))
            return 0
        only, held = hold_warned(lam, report, only, args.confirm_warned)
        result = lam.apply(report, only=only)
    finally:
        lam.close() if lam is not None else None
    if args.json:
        dump_json({"applied": result.applied,
                   "skipped": [{"id": i, "reason": r, "code": result.codes[i]} for i, r in result.skipped],
                   **({"held_back": [{"id": i, "warning": w} for i, w in held]} if held else {}), **noes})
    else:
        held_back = f", held back {len(held)}" if held else ""
        print(f"applied {len(result.applied)}, skipped {len(result.skipped)}{held_back}")
        for pid in result.applied:
            print(f"  applied  {printed_id(pid)}")
        for pid, reason in result.skipped:
            print(f"  skipped  {printed_id(pid)}: {printed_reason(reason)}")
        print("\n".join(held_lines(held)), end="\n" * bool(held))
        print(said, end="\n" * bool(said))
    # A script must see that nothing went in; a second run over applied proposals is not a failure.
    # Refused: the proposal itself is wrong. Stale: a lesson it touches changed since the report.
    refused = [pid for pid, _ in result.skipped if result.codes[pid] == "refused"]
    stale = [pid for pid, _ in result.skipped if result.codes[pid] == "stale"]
    if (refused or stale or held) and not result.applied:
        sys.stdout.flush()
        why = [f"{len(refused)} refused"] if refused else []
        why += [f"{len(held)} held back (a warned lesson: --confirm-warned applies it)"] if held else []
        if stale:
            why.append(f"{len(stale)} stale (a lesson it touches changed since the report was made: run "
                       f"`{program_name()} sleep --out {args.report}` again for a report of the store as it is now)")
        raise UsageError(f"none of the {plural(len(refused) + len(stale) + len(held), 'proposal')} in {args.report} "
                         f"was applied: {', '.join(why)}; the reasons are listed above")
    return 0
