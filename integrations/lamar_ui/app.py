"""The `lamar ui` web app: a Starlette application over one Lamar engine, safe by default (`create_app`)."""

from __future__ import annotations

import contextlib
import dataclasses
import secrets
import threading
from collections.abc import Awaitable, Callable, Collection, Mapping, Sequence
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from lamar import Experience, Lamar, LamarError, Scope, Status, UnknownExperience, Verdict
from lamar.cli.charts import injection_bars
from lamar.cli.timeline import latest_appearances, logged_counts, thin
from lamar.edit import next_version, revive_first
from lamar.experience import new_id
from lamar.lesson_file import read_lessons
from lamar.safety.boundary import TEXT_FIELDS, normalized, prompt_form
from lamar.search import matching
from lamar.store.base import Event
from lamar.whatif.ask import spelt_out
from lamar.whatif.injections import Injections, injections
from lamar_ui import form_pages, pages
from lamar_ui.answered import Answers
from lamar_ui.answers import no_page, not_here
from lamar_ui.bidi import lesson, said
from lamar_ui.form_pages import done_note
from lamar_ui.forms import choice, page_number, pairs, same_token, segments
from lamar_ui.guard import Forbidden, TokenGuard
from lamar_ui.recent import Kept, latest_episodes
from lamar_ui.rules_hint import rules_hint
from lamar_ui.sleep_review import SleepReview

STATIC = Path(__file__).with_name("static")
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]"]
_CHART_POINTS = 150
PAGE_ROWS = 200  # lessons in one page of the table: a team's store holds thousands
_EPISODE_ROWS = 100


_LEVERS = {
    "retire": "It will no longer be injected; its evidence and audit trail are kept.",
    "revive": "It becomes active and eligible again.",
    "erase": ("Its situation, action and rationale become [erased] in every copy the store keeps, and it "
              "retires; its evidence and every verdict stay, and the audit trail records who erased it. This "
              "cannot be undone."),
}
_CONTEXTS_BOX = ('<label><input type="checkbox" name="contexts" value="yes"> also blank the contexts of the '
                 "episodes it was eligible in</label>")

_EVIDENCE = {True: "kept", False: "restarted"}  # an edit's rule for the evidence, as its done line says it


class UI:
    """The app's state: the engine, the launch token, where sleep reports live, the model to mine with.

    `writer` opens a second engine over the same store, at the first write, to make the writes and run
    sleep: an engine is held for the whole of a write, so while one waits for another process's lock,
    the pages and the poll still read what is committed through `lam` (default: `lam` writes too)."""

    def __init__(self, lam: Lamar, *, token: str | None = None, report_path: str | Path,
                 model: str | None = None, traces: str | Sequence[str] | None = None,
                 max_model_calls: int | None = None, writer: Callable[[], Lamar] | None = None) -> None:
        self.lam = lam
        self._open_writer, self._writer, self._opening = writer, None if writer else lam, threading.Lock()
        self.token = token or secrets.token_urlsafe(32)
        self.report_path = Path(report_path)
        self.model = model
        self.traces = traces
        self._adding = threading.Lock()
        self._counting = threading.Lock()
        self._injections: Injections | None = None
        self._kept = Kept(lam)
        self.answers = Answers()  # each form's answer, for the GET its redirect makes
        self.review = SleepReview(lam, token=self.token, report_path=self.report_path, model=model, traces=traces,
                                  max_model_calls=max_model_calls, writer=lambda: self.writer,
                                  page=self._page, form=self._form, texts=self._texts)

    def cookie(self, port: int) -> str:
        """The token cookie's name, one per port: a browser keeps one set of cookies per host whatever
        the port, so two launches at once would each replace the other's cookie."""
        return f"lamar_ui_token_{port}"

    @property
    def writer(self) -> Lamar:
        """The engine writes go through (see the class), opened the first time it is asked for."""
        with self._opening:
            if self._writer is None and self._open_writer is not None:
                self._writer = self._open_writer()
            return self._writer or self.lam

    # -- plumbing ------------------------------------------------------------------------------

    def _page(self, title: str, body: str, active: str, *, answer: bool = False) -> HTMLResponse:
        """A page in the app's frame; `answer`: it answers a POST, kept as answered (`Answers`), so not reloaded."""
        version = self.lam.stats()["events"]
        return HTMLResponse(pages.layout(title, body, active=active, location=self.lam.store.location,
                                         version=version, follow=not answer))

    async def _form(self, request: Request) -> FormData:
        """The POST's form, once its token and origin are checked (the CSRF guard)."""
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            raise Forbidden(f"a write from another site ({site}) is refused")
        origin = request.headers.get("origin")
        if origin is not None and origin != f"{request.url.scheme}://{request.headers.get('host', '')}":
            raise Forbidden(f"a write from {origin} is refused")
        form = await request.form()
        if not same_token(str(form.get("token", "")), self.token):
            raise Forbidden("the form carries no valid token: reload the page and try again")
        return form

    def _texts(self, ids: Collection[str] | None = None) -> dict[str, str]:
        """Each lesson's text by id: every lesson's, or those of `ids` the store knows."""
        if ids is None:
            return {e.id: e.render() for e in self.lam.experiences()}
        texts = {}
        for exp_id in ids:
            with contextlib.suppress(UnknownExperience):  # an id the page shows as it is
                texts[exp_id] = self.lam.get(exp_id).render()
        return texts

    def _injection_chart(self) -> str:
        """The injection chart, counting only the episodes logged since it was last drawn."""
        with self._counting:  # two pages at once: the second counts what the first left
            self._injections = injections(self.lam.store, self._injections)
            return injection_bars(self._injections.episodes)

    # -- pages ---------------------------------------------------------------------------------

    async def lessons(self, request: Request) -> Response:
        verdict = request.query_params.get("verdict", "")
        status = request.query_params.get("status", "")
        scope_text = request.query_params.get("scope", "").strip()
        text = request.query_params.get("q", "").strip()
        asked = request.query_params.get("page", "")

        def build() -> str:
            choice("verdict", verdict, Verdict)
            choice("status", status, Status)
            scope = pairs(scope_text)
            number = page_number(asked)
            lam = self.lam
            exps = lam.experiences(status=status or None, verdict=verdict or None, scope=scope or None)
            if text:
                exps = matching(exps, text.casefold().split())
            number = min(number, max(1, -(-len(exps) // PAGE_ROWS)))  # past the last page: the last
            shown = exps[(number - 1) * PAGE_ROWS:number * PAGE_ROWS]
            rows = [(e, lam.evidence(e.id)) for e in shown]
            chart = self._kept.get(("injections",), self._injection_chart)
            return pages.lessons_page(rows, verdict=verdict, status=status, scope=scope_text, chart=chart,
                                      text=text, total=len(exps), page=number, per_page=PAGE_ROWS)

        try:
            body = await run_in_threadpool(build)
        except (LamarError, ValueError) as exc:
            body = f'<p class="error">{escape(str(exc))}</p><p><a href="/">Show every lesson</a></p>'
        return self._page("What the agent believes", body, "/")

    async def lessons_path(self, request: Request) -> Response:
        """/lessons/ID (a lesson) and /lessons/ID/LEVER, split on the path as it was sent.

        An id may hold a '/' (its links write it %2F); split after decoding, the id
        `X/retire` would open lesson X's retire page.
        """
        parts = segments(request)[2:]
        if request.method == "GET" and len(parts) > 1 and parts[0] and not parts[-1]:
            # A slash typed or pasted after the address: the page without it, at its own address.
            raw = request.scope.get("raw_path") or request.url.path.encode()
            query = f"?{request.url.query}" if request.url.query else ""
            return RedirectResponse(raw.decode("latin-1").split("?", 1)[0].rstrip("/") + query, status_code=307)
        if len(parts) == 1 and parts[0] and request.method == "GET":
            return await self.lesson(parts[0], request.query_params.get("done", ""))
        if len(parts) == 2 and parts[1] == "edit":
            return await self.edit(request, parts[0])
        if len(parts) == 2:
            return await self.lever(request, parts[0], parts[1])
        return self._missing("no such page: /lessons/ID or /lessons/ID/retire")

    async def lesson(self, exp_id: str, done: str = "") -> Response:
        """The lesson's page; `done`: the lever that led here, said at the top while the lesson is as it left it."""

        def build() -> str:
            exp = self.lam.get(exp_id)
            ev = self.lam.evidence(exp_id)
            past = self.lam.history(exp_id)
            shown = latest_appearances(self.lam, exp_id, 20)  # the page lists the latest 20
            return done_note(exp, done) + pages.lesson_page(exp, ev, thin(past.points, _CHART_POINTS), shown,
                                                            logged_counts(self.lam, exp_id), past.trail)

        try:
            body = await run_in_threadpool(build)
        except LamarError as exc:
            return self._missing(not_here(exc))
        return self._page("Lesson", body, "/")

    async def lever(self, request: Request, exp_id: str, lever: str) -> Response:
        """GET asks for confirmation; POST (with the token) retires, revives or erases."""
        if lever not in ("retire", "revive", "erase"):
            return self._missing(f"no lever {lever!r}: retire, revive or erase")
        back = f"/lessons/{quote(exp_id, safe='')}"
        try:
            exp = await run_in_threadpool(self.lam.get, exp_id)
        except LamarError as exc:
            return self._missing(not_here(exc), answer=request.method == "POST")
        if request.method == "GET":
            question = (f"{lever.capitalize()} this lesson? <q>{lesson(exp)}</q> " + _LEVERS[lever])
            extra = _CONTEXTS_BOX if lever == "erase" else ""
            body = form_pages.confirm_page(f"{back}/{lever}", question, self.token, {"reason": f"{lever}d in lamar ui"},
                                      button=f"Yes, {lever}", back=back, extra=extra)
            return self._page(f"{lever.capitalize()} a lesson", body, "/")
        form = await self._form(request)
        reason = str(form.get("reason") or f"{lever}d in lamar ui")
        contexts = form.get("contexts") == "yes"
        try:
            if lever == "erase":  # who: the OS user running the UI, as for `lamar erase`
                await run_in_threadpool(lambda: self.writer.erase(exp_id, contexts=contexts, reason=reason))
            else:
                await run_in_threadpool(lambda: getattr(self.writer, lever)(exp_id, reason))  # opened off the loop
        except LamarError as exc:  # refused (erased already, a lock held too long): the lesson is there, not a 404
            with contextlib.suppress(LamarError):
                exp = await run_in_threadpool(self.lam.get, exp_id)  # as it is now: does it still take the lever?
            extra = _CONTEXTS_BOX.replace('value="yes"', 'value="yes" checked' if contexts else 'value="yes"') \
                if lever == "erase" else ""
            body = form_pages.lever_refused(exp, lever, str(exc), self.token, reason, extra)
            page = self._page(f"{lever.capitalize()} a lesson", body, "/", answer=True)
            page.status_code = 409
            return page
        return RedirectResponse(f"{back}?done={lever}", status_code=303)

    async def edit(self, request: Request, exp_id: str) -> Response:
        """GET: the form, filled with the lesson. POST without confirm: a review of the new version.
        POST with confirm: store it (`Lamar.edit`); a refusal shows the form again with its reason."""
        back = f"/lessons/{quote(exp_id, safe='')}"
        try:
            exp = await run_in_threadpool(self.lam.get, exp_id)
        except LamarError as exc:
            return self._missing(not_here(exc), answer=request.method == "POST")
        if exp.status is Status.RETIRED:  # retired since its link was shown (another tab, `lamar apply`'s merge)
            form = await self._form(request) if request.method == "POST" else None
            typed = {k: str(form.get(k, "")) for k in TEXT_FIELDS} if form else {}
            return self._page("Edit a lesson", form_pages.retired_page(exp, typed), "/", answer=form is not None)
        if request.method == "GET":
            values = {"precondition": exp.precondition, "action": exp.action, "rationale": exp.rationale,
                      "scope": " ".join(f"{k}={v}" for k, v in exp.scope.items())}
            return self._page("Edit a lesson", form_pages.edit_page(exp, self.token, values), "/")
        form = await self._form(request)
        values = {k: str(form.get(k, "")) for k in ("precondition", "action", "rationale", "scope", "keep", "version")}
        keep = values["keep"] == "yes"
        try:
            scope = pairs(values["scope"])
            if form.get("confirm") == "yes" and values["version"] == str(exp.version - 1) and \
                    _reads(exp, values, scope):  # this form's own edit, sent twice (a double click, a resend)
                return RedirectResponse(f"{back}?done=edit:{exp.version}:{_EVIDENCE[keep]}", status_code=303)
            if values["version"] not in ("", str(exp.version)):  # another tab or process edited it meanwhile
                raise ValueError(f"the lesson was edited since this form was opened: it now reads as shown below "
                                 f"(version {exp.version}); check your text against it, then review again")
            if form.get("confirm") != "yes":
                new = normalized(Experience(values["precondition"], values["action"], values["rationale"],
                                            scope=Scope(scope)))  # as the store will keep it
                if not next_version(exp, {**{k: getattr(new, k) for k in TEXT_FIELDS}, "scope": new.scope})[1]:
                    raise ValueError("nothing to edit: the lesson already reads so (in prompt form); change a field, "
                                     "then review again")  # a Yes here could only be refused
                if keep and (new.action != exp.action or scope != dict(exp.scope)):
                    raise ValueError("keeping the evidence is for a wording fix of the precondition or the "
                                     "rationale: a new action or scope restarts it")
                question = (f"Store this as the lesson's next version? <q>{lesson(new)}</q> scope "
                            f"<code>{said(values['scope'] or 'everywhere')}</code>. "
                            + ("Its evidence is kept (a wording fix)." if keep else
                               "Its evidence restarts: the new text must earn its own verdict."))
                body = form_pages.confirm_page(f"{back}/edit", question, self.token, values, button="Yes, store it",
                                          back=back)
                return self._page("Edit a lesson", body, "/", answer=True)
            edited = await run_in_threadpool(lambda: self.writer.edit(
                exp_id, precondition=values["precondition"], action=values["action"],
                rationale=values["rationale"], scope=scope, evidence="keep" if keep else "restart",
                reason="edited in lamar ui"))
        except (LamarError, ValueError) as exc:
            if isinstance(exc, LamarError) and exc.advice == revive_first(exp_id):  # retired since the read above
                retired = dataclasses.replace(exp, status=Status.RETIRED)  # its advice names Python's call: ours here
                body = form_pages.retired_page(retired, {k: values[k] for k in TEXT_FIELDS})
            else:
                body = form_pages.edit_page(exp, self.token, values, str(exc))
            return self._page("Edit a lesson", body, "/", answer=True)
        return RedirectResponse(f"{back}?done=edit:{edited.version}:{_EVIDENCE[keep]}", status_code=303)

    async def add(self, request: Request) -> Response:
        """GET: the form. POST without confirm: a review of the lesson. POST with confirm: add it."""
        if request.method == "GET":
            return self._page("Add a lesson", form_pages.add_page(self.token, {}), "/add")
        form = await self._form(request)
        values = {k: str(form.get(k, "")) for k in ("precondition", "action", "rationale", "scope", "id")}
        try:
            exp = Experience(precondition=values["precondition"], action=values["action"],
                             rationale=values["rationale"], scope=Scope(pairs(values["scope"])),
                             provenance={"source": "manual", "via": "lamar ui"}, id=values["id"])
            if form.get("confirm") != "yes":
                values["id"] = new_id("exp")  # the confirmation adds under this id, once
                question = (f"Add this lesson? <q>{lesson(normalized(exp))}</q> scope "
                            f"<code>{said(values['scope'] or 'everywhere')}</code>")
                body = form_pages.confirm_page("/add", question, self.token, values, button="Yes, add it", back="/add")
                return self._page("Add a lesson", body, "/add", answer=True)
            exp_id = await run_in_threadpool(self._add_once, exp)
        except (LamarError, ValueError) as exc:
            return self._page("Add a lesson", form_pages.add_page(self.token, values, str(exc)), "/add", answer=True)
        return RedirectResponse(f"/lessons/{quote(exp_id, safe='')}", status_code=303)

    async def add_many(self, request: Request) -> Response:
        """POST without confirm: the lessons read from the text, for review. With confirm: add them all.
        The text is read as `lamar add --from` reads a file, and every lesson is checked before any
        is added: one bad line adds nothing. A store that fails part-way gets the review back, saying
        which were added; sent again, it adds only the others (each keeps the id its review gave it)."""
        form = await self._form(request)
        text, scope = str(form.get("lessons", "")), str(form.get("scope", ""))
        try:
            lessons = [normalized(e) for e in  # reviewed as the store will keep them
                       read_lessons(text, name="the text", scope=pairs(scope), status="active", via="lamar ui")]
            if form.get("confirm") != "yes":
                ids = [new_id("exp") for _ in lessons]  # the confirmation adds under these ids, once
                return self._page("Add lessons", form_pages.many_confirm_page(self.token, text, scope, lessons, ids),
                                  "/add", answer=True)
            ids = str(form.get("ids", "")).split() or [new_id("exp") for _ in lessons]
            if len(ids) != len(lessons) or len(set(ids)) != len(ids):
                raise ValueError("the text no longer holds the lessons reviewed: review them again")
            lessons = [dataclasses.replace(exp, id=exp_id) for exp, exp_id in zip(lessons, ids)]
        except (LamarError, ValueError) as exc:
            values = {"lessons": text, "many_scope": scope}
            return self._page("Add a lesson", form_pages.add_page(self.token, values, rules_hint(str(exc))), "/add",
                              answer=True)
        added, failure = await run_in_threadpool(self._add_all, lessons)
        if not failure:
            return RedirectResponse("/", status_code=303)
        body = form_pages.many_confirm_page(self.token, text, scope, lessons, ids, added=added, error=failure)
        return self._page("Add lessons", body, "/add", answer=True)

    def _add_all(self, lessons: list[Experience]) -> tuple[list[str], str]:
        """Add each lesson once, in order, until the store fails: the ids stored (here or by an
        earlier confirmation of the same review), and what stopped the rest ("" when none did)."""
        added: list[str] = []
        for n, exp in enumerate(lessons, 1):
            try:
                added.append(self._add_once(exp))
            except Exception as exc:  # noqa: BLE001 - any store's failure: the page must say what went in
                return added, (f"the store refused lesson {n} of {len(lessons)}, so {len(added)} "
                               f"{'was' if len(added) == 1 else 'were'} added and {len(lessons) - len(added)} "
                               f"not ({exc}); once the store takes writes again, add the rest with the button "
                               "below: those added are not added twice")
        return added, ""

    def _add_once(self, exp: Experience) -> str:
        """Add `exp`, unless a confirmation sent before stored it under the id its review gave it:
        a double click or the browser's resend of the form adds nothing twice."""
        with self._adding:  # a double click sends both at once: the second must see the first
            try:
                return self.writer.get(exp.id).id if exp.id else self.writer.add(exp)
            except UnknownExperience:
                return self.writer.add(exp)

    async def episodes(self, request: Request) -> Response:
        pending_only = request.query_params.get("pending") == "1"

        def build() -> str:
            lam = self.lam
            stats = lam.stats()  # the counts `lamar stats` gives; the rows from the log's end or the fold
            waiting = lam.pending()
            if pending_only:
                shown = [Event("episode", {"id": p.episode_id, "context": dict(p.context), "injected": list(p.injected),
                                           "held_out": list(p.held_out)}, time=p.time)
                         for p in waiting[-_EPISODE_ROWS:][::-1]]
                outcomes: dict[str, dict[str, Any]] = {}
            else:
                shown, outcomes = latest_episodes(lam.store, int(stats["events"]), _EPISODE_ROWS)
            named = {i for e in shown for i in (*e.data.get("injected", ()), *e.data.get("held_out", ()))}
            return pages.episodes_page(shown, outcomes, self._texts(named), pending_only=pending_only,
                                       total=int(stats["episodes"]), pending=len(waiting))

        return self._page("Episodes", await run_in_threadpool(build), "/episodes")

    async def recall(self, request: Request) -> Response:
        """What a recall would choose for a context and why (`Lamar.preview`): a GET that logs no
        episode, so trying contexts leaves the evidence as it was."""
        given = request.query_params.get("context")

        def build() -> str:
            if given is None:
                return pages.preview_page(None, "")
            try:
                return pages.preview_page(self.lam.preview(pairs(given, "context")), given)
            except (LamarError, ValueError) as exc:
                return pages.preview_page(None, given, str(exc))

        return self._page("Try a context", await run_in_threadpool(build), "/recall")

    async def whatif(self, request: Request) -> Response:
        """What other policies would have got over the logged episodes (`Lamar.whatif`)."""
        # No name holds a comma, and a comma-separated list is what many type first (`none, k:1`).
        policies = request.query_params.get("policies", "").replace(",", " ").split()

        def build() -> str:
            try:  # the estimate is a function of the log: kept until the store changes
                report = self._kept.get(("whatif", *policies),
                                        lambda: self.lam.whatif(spelt_out(self.lam, policies) or None))
                return pages.whatif_page(report, " ".join(policies))
            except LamarError as exc:
                return pages.whatif_page(None, " ".join(policies), str(exc))

        return self._page("What if?", await run_in_threadpool(build), "/whatif")

    async def version(self, request: Request) -> Response:
        return JSONResponse({"version": await run_in_threadpool(lambda: self.lam.stats()["events"])})

    def _missing(self, message: str, *, answer: bool = False) -> HTMLResponse:
        page = self._page("Not found", f'<p class="error">{escape(message)}</p><p><a href="/">All lessons</a></p>', "/",
                          answer=answer)
        page.status_code = 404
        return page


def create_app(ui: UI) -> Starlette:
    """The ASGI app for `ui` (serve it with uvicorn on 127.0.0.1).

    Safe by default: it answers only to 127.0.0.1/localhost host names (DNS rebinding), every
    request needs the per-launch token (given once in the URL, then kept in a SameSite=Strict
    cookie), every state-changing POST also carries the token in its form and is refused when
    the browser says it came from another site, and the Content-Security-Policy allows no inline
    script and nothing from outside. Lesson text is escaped on every page (see `pages`).
    """
    handler = Callable[[Request], Awaitable[Response]]
    routes: list[tuple[str, handler, list[str]]] = [
        ("/", ui.lessons, ["GET"]),
        ("/lessons/{rest:path}", ui.lessons_path, ["GET", "POST"]),
        ("/add", ui.add, ["GET", "POST"]),
        ("/add/many", ui.add_many, ["POST"]),
        ("/episodes", ui.episodes, ["GET"]),
        ("/recall", ui.recall, ["GET"]),
        ("/whatif", ui.whatif, ["GET"]),
        ("/sleep", ui.review.sleep, ["GET"]),
        ("/sleep/run", ui.review.sleep_run, ["POST"]),
        ("/sleep/decide", ui.review.sleep_decide, ["POST"]),
        ("/sleep/apply", ui.review.sleep_apply, ["POST"]),
        ("/api/version", ui.version, ["GET"]),
    ]
    return Starlette(
        routes=[Route(path, endpoint, methods=methods) for path, endpoint, methods in routes]
        + [Mount("/static", app=StaticFiles(directory=STATIC), name="static")],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=ALLOWED_HOSTS), Middleware(TokenGuard, ui=ui)],
        exception_handlers=no_page(lambda title, body: ui._page(title, body, "/")),
    )


def _reads(exp: Experience, values: Mapping[str, str], scope: Mapping[str, str]) -> bool:
    """Whether `exp` already reads as the edit form's `values` would store it (in prompt form)."""
    return dict(exp.scope) == scope and all(getattr(exp, name) == prompt_form(values[name]) for name in TEXT_FIELDS)


__all__ = ["UI", "create_app"]
