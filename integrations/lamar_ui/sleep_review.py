"""`lamar ui`'s sleep page: Run sleep, Approve, Reject and Apply over the report file `lamar review`
writes, each telling what it did to the tab that clicked."""

from __future__ import annotations

import contextlib
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response

from lamar import Lamar, LamarError, StoreError
from lamar.cancel import stop_point
from lamar.cli.outputs import report_refusal
from lamar.cli.render import plural
from lamar.cli.report_file import (
    REPORT_FORMAT,
    decisions_problem,
    parse_report,
    report_held,
    save_report,
)
from lamar.cli.review import read_traces
from lamar.last_sleep import record_sleep, recorded_by_caller
from lamar.policy.verdicts import Evidence
from lamar.sleep.printed import printed_id, printed_reason
from lamar.sleep.proposals import ApplyResult, Proposal, SleepReport, already_applied
from lamar.storable import storable_problem
from lamar_ui import pages
from lamar_ui.stoppable import Stoppable, Stopped

_NOTES_KEPT = 200  # sleep-button messages kept for their tabs' reloads; older ones are dropped


class SleepReview:
    """The sleep page's handlers over one engine (`writer` runs and applies sleep, see `UI`) and one report
    file; the app gives them its frame (`page`), its checked form (`form`) and the lessons' texts (`texts`)."""

    def __init__(self, lam: Lamar, *, token: str, report_path: Path, model: str | None,
                 traces: str | Sequence[str] | None, max_model_calls: int | None = None,
                 writer: Callable[[], Lamar] | None = None,
                 page: Callable[[str, str, str], HTMLResponse], form: Callable[[Request], Awaitable[FormData]],
                 texts: Callable[[], dict[str, str]]) -> None:
        self.lam = lam
        self.running = Stoppable()  # Run sleep and Apply, stopped with the server or their connection
        self._writer = writer or (lambda: lam)
        self.token = token
        self.report_path = report_path
        self.model = model
        self.traces = [traces] if isinstance(traces, str) else list(traces or ())  # one file, or several
        self.max_model_calls = max_model_calls
        self._page, self._form, self._texts = page, form, texts
        # What a sleep button did, by the note id its redirect carries, and the proposal it decided ("" for Run
        # sleep; None when what it did is all there is to read): focus goes to the next one to decide.
        self._notes: dict[str, tuple[str, str | None]] = {}

    def _report(self) -> tuple[dict[str, Any] | None, str]:
        """The sleep report, and why it cannot be read: said on each page, not kept, so it goes
        once the file is mended."""
        try:
            data = parse_report(self.report_path.read_text(encoding="utf-8"))  # as `lamar review` reads it
        except FileNotFoundError:
            return None, ""
        except (OSError, ValueError, RecursionError) as exc:
            why = "its JSON is nested too deep" if isinstance(exc, RecursionError) else exc
            return None, f"cannot read the sleep report {self.report_path}: {why}"
        if not isinstance(data, dict) or data.get("format") != REPORT_FORMAT:
            return None, ""
        # As `lamar apply` checks it: a lone surrogate cannot be written out in the page (a server error).
        unfit = storable_problem(data)
        if unfit:
            return None, f"cannot read the sleep report {self.report_path}: it {unfit}"
        # An approved list edited into a string would be read letter by letter, or crash the page.
        problem = decisions_problem(data, str(self.report_path))
        if problem:
            return None, f"cannot use the sleep report {problem}"
        try:  # Approve and Apply read the proposals' ids too: a proposal edited into a string crashed them
            SleepReport.from_dict(data)
        except LamarError as exc:
            return None, f"cannot read the sleep report {self.report_path}: {exc}"
        return data, ""

    def _told(self, message: str, *, after: str | None = None) -> RedirectResponse:
        """Back to the sleep page, carrying `message` to the tab that clicked and to no other: it
        travels as a one-time id in the address, since every tab and browser shares this app.
        `after`: the proposal just decided ("" after Run sleep), so the page focuses the next to decide."""
        note = secrets.token_urlsafe(12)
        self._notes[note] = (message, after)
        while len(self._notes) > _NOTES_KEPT:  # dicts keep insertion order: drop the oldest
            del self._notes[next(iter(self._notes))]
        return RedirectResponse(f"/sleep?note={note}", status_code=303)

    async def sleep(self, request: Request) -> Response:
        told, after = self._notes.get(request.query_params.get("note", ""), ("", None))

        def build() -> str:
            data, problem = self._report()
            try:
                report = SleepReport.from_dict(data) if data else SleepReport([], [], 0, 0.0, {})
            except LamarError as exc:  # a report edited by hand: say so, as `lamar review` does
                problem = f"cannot read the sleep report {self.report_path}: {exc}"
                data, report = None, SleepReport([], [], 0, 0.0, {})
            # Applied is a fact of the store, not of the report file: apply's own check says which
            # (`lamar review` and `lamar sleep` ask it too), so an applied proposal, an acknowledged
            # contradiction sleep proposes again every night among them, is counted, not listed;
            # so even once a compaction has folded the record of it into a checkpoint.
            done, unsure = _applied(self.lam, report)
            problem = "; ".join(text for text in (problem, unsure) if text)
            listed = [p for p in report.proposals if p.id not in done]
            decisions = {pid: "approved" for pid in (data or {}).get("approved", []) if pid not in done}
            decisions.update({pid: "rejected" for pid in (data or {}).get("rejected", []) if pid not in done})
            now: dict[str, Evidence | None] = {}
            for p in listed:
                for i in p.experience_ids:
                    try:
                        now[i] = self.lam.evidence(i)
                    except LamarError:
                        now[i] = None
            message = "; ".join(text for text in (told, problem) if text)
            # The Apply form names the approvals shown, not the applied ones the page hides.
            shown = [pid for pid in (data or {}).get("approved", []) if pid not in done]
            return pages.sleep_page(listed, decisions, now, self._texts(), self.token,
                                    has_report=data is not None, model=self.model or "", message=message,
                                    approved=shown, applied=len(done),
                                    focus=_next(listed, decisions, after) if told else "")

        return self._page("Sleep: proposals to review", await run_in_threadpool(build), "/sleep")

    async def sleep_run(self, request: Request) -> Response:
        await self._form(request)

        def run() -> str:
            traces = model = None
            if self.model and self.traces:
                from lamar.models import from_spec

                traces, model = read_traces(self.traces), from_spec(self.model)
            if refusal := report_refusal(self.report_path):  # the file may have appeared since launch
                raise ValueError(refusal)
            writer = self._writer()
            # Every proposal, as `lamar sleep --out` saves them: the page counts the applied ones apart.
            with recorded_by_caller():  # once, below, naming the report it is saved to
                report = writer.sleep(traces=traces, model=model, max_model_calls=self.max_model_calls,
                                      include_applied=True)
            try:
                stop_point()  # a sleep stopped once it is done still saves nothing
                with report_held(str(self.report_path)):  # not amid a review's write-back, which would undo it
                    save_report(str(self.report_path), report.to_dict())
            except BaseException:
                with contextlib.suppress(OSError):  # the sleep ran: `lamar stats` says so, with no report to name
                    record_sleep(writer.store.location, report)
                raise
            made = _made_message(writer, report)
            try:  # for `lamar stats`, as `lamar sleep` keeps it; the report is saved whether or not this is
                record_sleep(writer.store.location, report, saved_to=str(self.report_path), store=writer.store)
            except (OSError, StoreError) as exc:
                made += f"; its figures for `lamar stats` were not kept ({_said(exc)})"
            if report.mining_lost:  # what was mined is in the report; what was lost is said, not dropped unseen
                made += f"; mining read only part of the model's output: {report.mining_lost}"
            return f"{made}; mining failed, no lesson was mined: {report.mining_error}" if report.mining_error else made

        try:
            message = await self.running.run(request, "Run sleep", run)
        except Stopped as exc:
            return self._told(str(exc))
        except (LamarError, OSError, ValueError) as exc:
            return self._told(f"sleep failed: {_said(exc)}")
        return self._told(message, after="")

    async def sleep_decide(self, request: Request) -> Response:
        form = await self._form(request)
        pid, decision = str(form.get("proposal", "")), str(form.get("decision", ""))

        def decide() -> tuple[str, str | None]:
            data, problem = self._report()
            if problem:
                return problem, None
            if data is None or decision not in ("approved", "rejected") or \
                    pid not in {p.get("id") for p in data.get("proposals", []) if isinstance(p, Mapping)}:
                return "that proposal is not in the current report: run sleep again", None
            if pid in data.get(decision, []):  # the same decision again: the report holds it already
                return _again(self._writer(), data, pid, decision), pid
            other = "rejected" if decision == "approved" else "approved"
            order = [p["id"] for p in data["proposals"]]
            chosen = set(data.get(decision, [])) | {pid}
            data[decision] = [i for i in order if i in chosen]
            data[other] = [i for i in data.get(other, []) if i != pid]
            data["reviewed"] = time.time()
            save_report(str(self.report_path), data)  # the same record `lamar review` writes
            return f"{printed_id(pid)} {decision}" + _remembered(self._writer(), data, pid, decision), pid

        def held() -> tuple[str, str | None]:
            # Read and written under the report's lock: a review saving meanwhile would otherwise drop
            # this decision, or this one that review's answers. Waited for in a thread, not in the loop.
            with report_held(str(self.report_path)):
                return decide()

        try:
            message, decided = await run_in_threadpool(held)
        except (OSError, LamarError) as exc:  # a full disk: the page says so, the report there is left as it was
            return self._told(_said(exc))
        return self._told(message, after=decided)

    async def sleep_apply(self, request: Request) -> Response:
        """Apply the approvals the clicked page showed, and only while the report still holds
        them: one approved since (`lamar review`, another tab) is shown before it is applied.
        An approval the store holds as applied counts neither way: the page hides it, a page shown
        before it was applied sends it, and applying it again changes nothing."""
        form = await self._form(request)
        data, problem = self._report()
        if problem:
            return self._told(problem)
        approved = list((data or {}).get("approved", []))
        if data is None or not approved:
            return self._told("nothing approved: approve proposals first")
        sent = set(map(str, form.getlist("approved")))

        def check_and_apply() -> ApplyResult | list[str]:
            report = SleepReport.from_dict(data)
            lam = self._writer()
            done = set(already_applied(report, lam.would_skip(report)))
            waiting = [pid for pid in approved if pid not in done]
            if sent - done != set(waiting):
                return waiting
            return lam.apply(report, [pid for pid in approved if pid in sent])

        try:
            result = await self.running.run(request, "Apply", check_and_apply)
        except Stopped as exc:  # between two proposals: those applied stay applied, each written whole
            return self._told(str(exc))
        except LamarError as exc:
            return self._told(f"apply failed: {exc}")
        if isinstance(result, list):
            return self._told(f"the approvals changed since this page was shown (approved now: "
                              f"{', '.join(map(printed_id, result)) or 'none'}): check them, then apply again")
        return self._told(_applied_message(result))


def _next(listed: Sequence[Proposal], decisions: Mapping[str, str], after: str | None) -> str:
    """Where focus goes once a button has said what it did: the first proposal left to decide after the one
    decided (`after`; "" after Run sleep), else Apply when approvals wait ("apply"), else what was said ("said")."""
    if after is None:
        return "said"
    order = [p.id for p in listed]
    start = order.index(after) + 1 if after in order else 0
    undecided = [pid for pid in order[start:] + order[:start] if decisions.get(pid, "undecided") == "undecided"]
    if undecided:
        return undecided[0]
    return "apply" if any(d == "approved" for d in decisions.values()) else "said"


def _applied(lam: Lamar, report: SleepReport) -> tuple[set[str], str]:
    """The report's proposals the store holds as applied, and why none are known: a courtesy, as in `lamar
    sleep` and `lamar review`, so a store that cannot say costs the page nothing but the hiding."""
    try:
        return (set(already_applied(report, lam.would_skip(report))) if report.proposals else set()), ""
    except LamarError as exc:
        return set(), f"every proposal is listed, applied or not (the store could not say: {exc})"


def _made_message(lam: Lamar, report: SleepReport) -> str:
    """What Run sleep made, counted as `lamar sleep` counts it: the proposals listed, and apart those
    the store holds as applied, which the page does not list. Which those are is a courtesy: a store
    that cannot say is said, and the report, saved already, is not called a failed sleep."""
    at = time.strftime("%H:%M:%S")
    try:
        done = already_applied(report, lam.would_skip(report)) if report.proposals else []
    except LamarError as exc:
        return f"sleep made {plural(len(report.proposals), 'proposal')} at {at}, applied or not (the store " \
               f"could not say: {exc})"
    made = f"sleep made {plural(len(report.proposals) - len(done), 'proposal')} at {at}"
    made += f"; {plural(len(done), 'proposal')} already applied, not listed" if done else ""
    rejected = report.summary.get("rejected")
    return f"{made}; {plural(len(rejected), 'rejected proposal')} left out" if rejected else made


def _remembered(lam: Lamar, data: dict[str, Any], pid: str, decision: str) -> str:
    """Have the store remember a no (and forget it on a yes), as `lamar review` does, so the next Run sleep
    leaves the proposal out; a store that cannot say costs the decision nothing: the report holds it, and
    `lamar apply` records it."""
    try:
        if decision == "rejected":
            done = lam.reject(SleepReport.from_dict(data), [pid])
            return "; sleep leaves it out until what it rests on changes" if done else ""
        return "; its rejection undone" if lam.unreject(pid) else ""
    except LamarError as exc:
        return f" (the store did not record it: {_said(exc)})"


def _again(lam: Lamar, data: dict[str, Any], pid: str, decision: str) -> str:
    """What the same decision made again says: that nothing changed, what holds, and how to undo it."""
    trouble = _remembered(lam, data, pid, decision)  # a store that missed the first click records it now
    if trouble.startswith(" ("):  # the store could not record it: that is what there is to say
        return f"{printed_id(pid)} was already {decision}{trouble}"
    if decision == "rejected":
        return (f"{printed_id(pid)} was already rejected: nothing changed. Sleep leaves it out until what it rests on "
                "changes; Approve on its card takes the rejection back.")
    return (f"{printed_id(pid)} was already approved: nothing changed. Apply carries it out; Reject on its card "
            "withdraws the approval.")


def _said(exc: Exception) -> str:
    """An error as the page says it: an OSError's own words ("No space left on device") without
    its number and path, anything else as it reads."""
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def _applied_message(result: ApplyResult) -> str:
    """What Apply did. A proposal applied before (a second Apply, the browser's resend, `lamar
    apply`) is said to be so, not counted as skipped: nothing about it was refused."""
    applied = result.applied
    done = [pid for pid, _ in result.skipped if result.codes[pid] == "applied"]
    refused = [(pid, why) for pid, why in result.skipped if pid not in done]
    if done and not applied and not refused:
        return f"already applied, nothing changed: {', '.join(map(printed_id, done))}"
    reasons = "; ".join(f"{printed_id(pid)}: {printed_reason(why)}" for pid, why in refused)
    return (f"applied {len(applied)}, skipped {len(refused)}" + (f" ({reasons})" if reasons else "")
            + (f"; already applied, nothing changed: {', '.join(map(printed_id, done))}" if done else ""))


__all__ = ["SleepReview"]
