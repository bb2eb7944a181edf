"""The tools' work: check what came over the protocol, call the engine, turn refusals into tool errors."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Mapping
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError

from lamar import Experience, InvalidExperience, Lamar, Scope, Status
from lamar.edit import NEW_TREATMENT, next_version, revive_first
from lamar.recall import neutralize
from lamar.safety.lessons import lesson_refusal
from lamar.signals import did_you_mean
from lamar.sleep.similarity import normalize
from lamar.whatif.ask import spelt_out
from lamar_mcp.checks import (
    GLOSSES,
    MAX_FREE_TEXT,
    MAX_ID,
    MAX_KEY,
    MAX_KEYS,
    MAX_TEXT,
    SIGNALS,
    STATUSES,
    checked_context,
    checked_id,
    checked_text,
    signal_of,
)
from lamar_mcp.context import ContextReader, normalise, recall_hint
from lamar_mcp.held import forgetting, refuse_held, refuse_repeat, same_arm
from lamar_mcp.known import KnownLessons, Mark
from lamar_mcp.loose import flag
from lamar_mcp.pages import page_of, page_size, resource_page
from lamar_mcp.refusals import guarded, lesson_named, shown
from lamar_mcp.results import (
    EraseResult,
    HeldLesson,
    ImportedRule,
    ImportResult,
    Lesson,
    LessonList,
    ProposeMany,
    ProposeResult,
    RecallResult,
    ReportResult,
    SkippedBlock,
    lesson_of,
    preview_row,
)
from lamar_mcp.rules_folder import rules_folder

AGENT_PROVENANCE = {"source": "agent", "via": "mcp"}


def _retired(exp_id: str) -> str:
    """The refusal to edit a retired lesson: a person revives it, as no tool here does."""
    return (f"lesson {neutralize(exp_id)} is retired, and no tool here revives a lesson: tell the user, who can "
            f"revive it with `lamar revive {neutralize(exp_id)}` if it should be shown again; nothing was stored")


class LamarTools:
    """The MCP tools over one engine; each method is one tool and raises `ToolError` on bad input.

    Every check runs before the engine writes, so a refused call leaves the store as it was. A
    `ToolError` reaches the client as a result with `isError` set and its message, which says
    what to do; anything else is a crash the SDK reports without its text.

    Args:
        lamar: the engine whose store the tools read and write.
        cwd: the folder free text is read in (its git top-level names the project; default: here).

    >>> from lamar import Experience, Lamar, Scope
    >>> lam = Lamar(k=1, seed=0, holdout=0.0)
    >>> eid = lam.add(Experience("the build fails", "clear the cache", scope=Scope(project="shop")))
    >>> tools = LamarTools(lam)
    >>> found = tools.recall({"project": "shop"})
    >>> found.lesson_ids == [eid], found.prompt.splitlines()[-2]
    (True, '1. > When the build fails, clear the cache.')
    >>> tools.report(found.episode_id, "shipped").reward
    1.0
    >>> try: tools.report(found.episode_id, "great")
    ... except ToolError as exc: print(exc)
    signal must be one of shipped, accepted, reasked, corrected, reverted (what the human did); got 'great'
    """

    def __init__(self, lamar: Lamar, cwd: str | None = None) -> None:
        self.lamar = lamar
        self.reader = ContextReader(cwd)
        # The SDK runs tool calls at once, each in a worker thread: the check for a held lesson
        # and the add it allows are one step, or two proposals of one lesson would both be stored.
        self._proposing = threading.Lock()
        # An add or a recall reads the events since the last one, not every lesson again (a store of n
        # lessons filled one add at a time would read n^2 of them); the lessons only when one may be a copy.
        self.known = KnownLessons(lamar)

    def recall(self, context: Any = None, text: Any = None, dry_run: Any = False) -> RecallResult:
        """Recall for labels, for the task in words, or both (labels win over what the words suggest);
        `dry_run`: what a recall would choose and why, logging no episode."""
        dry_run = flag(dry_run, "dry_run")
        if text is None and (context is None or context == {}):  # {}: no label reaches a scoped lesson
            raise ToolError("recall needs context (short labels such as {\"project\": \"shop\"}) or text (the task "
                            "in your own words); " + ("neither was given" if context is None else
                                                     "context is empty and no text was given"))
        ctx = {} if context is None else checked_context(context, "context")
        if text is not None:
            if not isinstance(text, str) or not text.strip():
                raise ToolError(f"text must be the task in words, a non-empty string; got {shown(text)}")
            ctx = {**self.reader.from_text(text[:MAX_FREE_TEXT]), **ctx}
        # The labels from the store's events since the last call, not every lesson read again; which
        # lessons were eligible from the engine's own choice.
        known = self._guard(self.known.scopes)
        ctx = normalise(ctx, known)
        placeless = text is not None  # the words named no project when the context holds none
        if dry_run:
            seen = self._guard(lambda: self.lamar.preview(ctx))
            return RecallResult(prompt=seen.as_prompt(), episode_id="", lesson_ids=[e.id for e in seen.wanted],
                                context={neutralize(k): neutralize(v) for k, v in ctx.items()},
                                hint=recall_hint(ctx, known, seen.eligible, self.known.unscoped, placeless=placeless),
                                logged=False,
                                preview=[preview_row(row) for row in seen.lessons])
        rec = self._guard(lambda: self.lamar.recall(ctx))
        return RecallResult(prompt=rec.as_prompt(), episode_id=rec.episode_id, lesson_ids=rec.ids,
                            context={neutralize(k): neutralize(v) for k, v in ctx.items()},
                            hint=recall_hint(ctx, known, rec.eligible, self.known.unscoped, placeless=placeless))

    def _spelled(self, scope: dict[str, str]) -> dict[str, str]:
        """A new scope spelled as recall spells its labels (`normalise`): else no recall would match it."""
        return normalise(scope, self._guard(self.known.scopes)) if scope else scope

    def _guard(self, call: Any) -> Any:
        """Run an engine call; its refusals (unknown episode, duplicate report, a store that cannot be
        written, ...) become tool errors that say what to do next."""
        return guarded(call, self.lamar.store)

    def scopes_json(self) -> str:
        """The scope keys and values the lessons use (the lamar://scopes resource)."""
        known = self._guard(self.known.scopes)
        return json.dumps({neutralize(k): [neutralize(v) for v in values] for k, values in known.items()}, indent=2,
                          ensure_ascii=False)

    def report(self, episode_id: Any = None, signal: Any = None) -> ReportResult:
        if episode_id == "":  # the episode_id a recall with dry_run returns
            raise ToolError("episode_id is empty, as a recall with dry_run returns it: a recall with dry_run logs no "
                            "episode, so it has nothing to report; report the episode_id of a recall without dry_run")
        episode = checked_id(episode_id, "episode_id", "the episode_id that recall() returned")
        if signal is None:
            raise ToolError(f"signal is missing: pass what the human did, one of {', '.join(SIGNALS)}")
        parsed = signal_of(signal)
        if parsed is None:
            raise ToolError(f"signal must be one of {', '.join(SIGNALS)} (what the human did); got {shown(signal)}"
                            + did_you_mean(signal, GLOSSES))
        self._guard(lambda: self.lamar.report(episode, parsed))
        return ReportResult(episode_id=episode, signal=parsed.value, reward=parsed.reward)

    def evidence(self, lesson_id: Any = None) -> Lesson:
        given = checked_id(lesson_id, "lesson_id", "an id that lessons() lists")
        lesson: str = self._guard(lambda: lesson_named(self.lamar, given))
        found: Lesson = self._guard(lambda: lesson_of(self.lamar.get(lesson), self.lamar.evidence(lesson)))
        return found

    def lessons(self, context: Any = None, status: Any = None, text: Any = None, limit: Any = None,
                cursor: Any = None) -> LessonList:
        """A page of the lessons (`lamar_mcp.pages`), optionally only those eligible in `context`, of one
        `status`, or holding every word of `text` in their text, scope or id (any case), as `lamar search` does."""
        ctx = None if context is None else checked_context(context, "context")
        wanted = status.strip().lower() if isinstance(status, str) else status  # "Active", as a model may type it
        if wanted is not None and wanted not in STATUSES:
            raise ToolError(f"status must be one of {', '.join(STATUSES)}, or left out for all; got {shown(status)}")
        if text is not None and (not isinstance(text, str) or not text.split() or len(text) > MAX_TEXT):
            raise ToolError(f"text must be words to look for (a non-empty string of at most {MAX_TEXT} characters), "
                            f"or left out for all; got {shown(text)}")
        size = page_size(limit)

        def found_lessons() -> LessonList:
            # Spelled as recall spells it: labels that recall matches must list the same lessons here.
            where = None if ctx is None else normalise(ctx, self.known.scopes())
            return page_of(self.lamar, cursor, size, lambda exp: lesson_of(exp, self.lamar.evidence(exp.id)),
                           status=wanted, context=where, text=text)

        found: LessonList = self._guard(found_lessons)
        return found

    @forgetting
    def propose_lesson(self, precondition: Any = None, action: Any = None, rationale: Any = None, scope: Any = None,
                       client: str | None = None) -> ProposeResult:
        """Store a candidate lesson; as `lamar add`, only the precondition and the action are needed.

        `client` (the MCP client's name, when it gave one) joins its provenance.
        """
        fields = {name: checked_text("" if value is None and name == "rationale" else value, name) for name, value in
                  (("precondition", precondition), ("action", action), ("rationale", rationale))}
        where = self._spelled({} if scope is None else checked_context(scope, "scope"))
        exp = _candidate(fields["precondition"], fields["action"], fields["rationale"], where, client)
        with self._proposing:
            stored = self._store(exp, self._refuse_duplicate(exp))
        return ProposeResult(lesson_id=stored, status=Status.CANDIDATE.value, text=neutralize(exp.render()))

    @forgetting
    def propose_lessons(self, lessons: Any = None, scope: Any = None, client: str | None = None) -> ProposeMany:
        """Many candidate lessons from Markdown bullets or JSON Lines, read as `lamar add --from` reads a
        file; every one is checked (and screened, and compared with the lessons held) before any is
        stored, so one refused line stores none. A line whose lesson is already held (the same words
        in the same scope, as `lamar add --from` skips it) is listed as held, not stored again: the
        same call made again after an interruption stores the rest."""
        from lamar.lesson_file import new_lessons, read_lessons

        if isinstance(lessons, dict) or (isinstance(lessons, list) and lessons and all(
                isinstance(item, dict) for item in lessons)):
            # The SDK parses an argument that is one JSON value; JSON Lines is one object a line again.
            lessons = "\n".join(json.dumps(item, ensure_ascii=False) for item in
                                 (lessons if isinstance(lessons, list) else [lessons]))
        if isinstance(lessons, str) and len(lessons) > MAX_FREE_TEXT:  # the form was right: say what to change
            raise ToolError(f"lessons is {len(lessons):,} characters long, at most {MAX_FREE_TEXT:,} a call: send the "
                            "lessons in several calls of fewer lines; nothing was stored")
        if not isinstance(lessons, str) or not lessons.strip():
            raise ToolError("lessons must be Markdown bullets (\"- When X, do Y, because Z.\") or JSON Lines "
                            "({\"precondition\": ..., \"action\": ...} a line), a non-empty string of at most "
                            f"{MAX_FREE_TEXT} characters; got {shown(lessons)}")
        where = {} if scope is None else checked_context(scope, "scope")
        read = self._guard(lambda: read_lessons(lessons, name="the text", scope=where, status="candidate", via="mcp"))
        found: list[Experience] = []
        for exp in read:
            try:  # the limits of propose_lesson, line by line
                scoped = self._spelled(checked_context(dict(exp.scope), "scope"))
                new = _candidate(checked_text(exp.precondition, "precondition"), checked_text(exp.action, "action"),
                                 checked_text(exp.rationale, "rationale"), scoped, client, exp.provenance["line"])
                refuse_repeat(new, found)
            except ToolError as exc:
                raise ToolError(f"line {exp.provenance['line']}: {exc}; none of the lessons was stored") from None
            found.append(new)
        # A held lesson is skipped, not refused: after a disconnect midway through the adds, the
        # same call made again must be able to store the rest.
        with self._proposing:
            looks: list[tuple[bool, Mark]] = self._guard(lambda: self.known.look_all(found))
            marks = {exp.id: mark for exp, (_, mark) in zip(found, looks)}
            touched = any(copy for copy, _ in looks)
            stored = self._guard(self.lamar.experiences) if touched else []  # else none holds a line
            fresh, held = new_lessons(stored, found)
            for exp in fresh:
                try:
                    self._refuse_duplicate(exp, stored)
                except ToolError as exc:
                    raise ToolError(f"line {exp.provenance['line']}: {exc}; none of the lessons was stored") from None
            ids: list[str] = []
            for exp in fresh:
                try:
                    ids.append(self._store(exp, None if touched else marks[exp.id]))
                except ToolError as exc:
                    raise ToolError(f"line {exp.provenance['line']}: {exc}; {_stored_before(fresh, ids)}") from None
        return ProposeMany(count=len(ids), lessons=[
            ProposeResult(lesson_id=i, status=Status.CANDIDATE.value, text=neutralize(e.render()))
            for i, e in zip(ids, fresh)], held=[
            HeldLesson(line=h.lesson.provenance["line"], lesson_id=neutralize(h.by.id), status=h.by.status.value,
                       text=neutralize(h.by.render())) for h in held])

    def erase(self, lesson_id: Any = None, contexts: Any = False, reason: Any = None,
              client: str | None = None) -> EraseResult:
        """Erase a lesson's text from the store (`Lamar.erase`); the audit names the MCP client."""
        lesson = checked_id(lesson_id, "lesson_id", "an id that lessons() lists")
        contexts = flag(contexts, "contexts")
        if reason is not None and (not isinstance(reason, str) or len(reason) > MAX_TEXT):
            raise ToolError(f"reason must be a sentence (a string of at most {MAX_TEXT} characters); "
                            f"got {shown(reason)}")
        by = "an agent via MCP" + (f" ({client[:MAX_KEY]})" if client else "")
        why = reason or "erased through MCP"
        lesson = self._guard(lambda: lesson_named(self.lamar, lesson))  # the start of one id, as `lamar erase` takes
        done = self._guard(lambda: self.lamar.erase(lesson, contexts=contexts, by=by, reason=why))
        self.known.forget()  # its words must not stay in the server's memory
        return EraseResult(lesson_id=done.id, by=neutralize(done.by), reason=neutralize(done.reason),
                           episodes=len(done.episodes), events=done.events)

    @forgetting
    def edit(self, lesson_id: Any = None, precondition: Any = None, action: Any = None, rationale: Any = None,
             scope: Any = None, keep_evidence: Any = False, client: str | None = None) -> Lesson:
        """A new version of a lesson (`Lamar.edit`): the fields given replace the lesson's, its
        evidence restarts unless `keep_evidence` (a wording fix; refused for a new action or scope)."""
        lesson = checked_id(lesson_id, "lesson_id", "an id that lessons() lists")
        keep_evidence = flag(keep_evidence, "keep_evidence")
        given = {name: checked_text(value, name) for name, value in
                 (("precondition", precondition), ("action", action), ("rationale", rationale)) if value is not None}
        where = None if scope is None else self._spelled(checked_context(scope, "scope"))
        if not given and where is None:
            raise ToolError("edit needs at least one of precondition, action, rationale or scope: the fields to change")
        lesson = self._guard(lambda: lesson_named(self.lamar, lesson))  # the start of one id, as `lamar edit` takes
        exp = self._guard(lambda: self.lamar.get(lesson))
        if exp.status is Status.RETIRED and not exp.provenance.get("erased"):  # the engine's advice names revive
            raise ToolError(_retired(exp.id))
        texts = {name: given.get(name, getattr(exp, name)) for name in ("precondition", "action", "rationale")}
        unsafe = lesson_refusal(texts["precondition"], texts["action"], texts["rationale"],
                                exp.scope if where is None else where)
        if unsafe:
            raise ToolError(f"edit refused, nothing was stored: it {unsafe}. Lessons are shown to agents as notes: "
                            "state the situation and what to do in plain words, with no credentials and no "
                            "instructions to the model")
        if keep_evidence:  # the engine's refusal names its own keyword and the command line's flag
            fields = {**given, **({} if where is None else {"scope": Scope(where)})}
            moved = [n for n in NEW_TREATMENT if n in self._guard(lambda: next_version(exp, fields))[1]]
            if moved:
                raise ToolError(f"keep_evidence is for a wording fix of the precondition or the rationale; this edit "
                                f"changes the {' and the '.join(moved)}, so it is a different treatment and its "
                                "evidence restarts: call edit again without keep_evidence; nothing was stored")
        via = "edited by an agent via MCP" + (f" ({client[:MAX_KEY]})" if client else "")
        try:
            edited = self._guard(lambda: self.lamar.edit(lesson, **given, scope=where,
                                                    evidence="keep" if keep_evidence else "restart", reason=via))
        except ToolError as exc:  # retired since the read above: the engine's advice names a Python call
            if getattr(exc.__cause__, "advice", None) == revive_first(exp.id):
                raise ToolError(_retired(exp.id)) from exc
            raise
        found: Lesson = self._guard(lambda: lesson_of(edited, self.lamar.evidence(lesson)))
        return found

    def whatif(self, policies: Any = None, scope: Any = None) -> dict[str, Any]:
        """What other policies would have got over the logged episodes (`Lamar.whatif`), as JSON data."""
        if policies is not None and (not isinstance(policies, list) or len(policies) > MAX_KEYS or not all(
                isinstance(p, str) and 0 < len(p) <= MAX_ID for p in policies)):
            raise ToolError("policies must be a list of policy names such as [\"none\", \"proven\", \"k:1\", "
                            "\"without:LESSON_ID\", \"holdout:0.05\"], or left out for the usual ones; "
                            f"got {shown(policies)}")
        where = None if scope is None else checked_context(scope, "scope")
        if where is not None:  # the episodes were logged with recall's spelling of the labels
            where = normalise(where, self._guard(self.known.scopes))
        # A lesson id shortened to a prefix only one lesson has, as the command line takes it.
        asked = self._guard(lambda: spelt_out(self.lamar, policies)) if policies else None
        found: dict[str, Any] = self._guard(lambda: self.lamar.whatif(asked, scope=where).to_dict())
        return found

    def _refuse_duplicate(self, exp: Experience, held: list[Experience] | None = None) -> Mark | None:
        """One arm per lesson: a near-copy would split the evidence the first one is gathering.
        `held`: the stored lessons, when the caller has them (else read when one may be a copy).
        Returns the mark of a look that found no lesson to compare (`KnownLessons.look`)."""
        if held is None:
            look: tuple[bool, Mark] = self._guard(lambda: self.known.look(exp))
            if not look[0]:
                return look[1]
        for other in self._guard(self.lamar.experiences) if held is None else held:
            if same_arm(other, exp):
                refuse_held(other)
        return None

    def _store(self, exp: Experience, since: Mark | None = None) -> str:
        """Add `exp`; refused (and retired) when a near-copy was added before it meanwhile.

        The check before the add is one step with it only within this process: another server on
        the store may add a near-copy between the two. So the lessons of the scope are looked at
        again once ours is stored (those learned since `since`, the look before the add), as
        `Lamar.add` does for word-for-word copies, and the first of the near-copies in the order
        they were added is the lesson; ours, when it came later, is retired
        at once, so that no evidence is split between the two. Each adder sees every add that took
        an earlier place once its own has, so exactly one of them keeps its lesson.
        """
        def add() -> str:
            try:
                return self.lamar.add(exp)
            except InvalidExperience:  # the same words, stored by another server under the id they give
                for other in self.lamar.experiences(scope=dict(exp.scope)):
                    if other.id == exp.id:
                        refuse_held(other)
                raise

        stored: str = self._guard(add)
        # Adding the same words again stores nothing and returns the first copy of them, once every
        # add that took an earlier place has ended (a PostgreSQL add may commit after one that took
        # a later place): the look below then sees each of them.
        twin = Experience(exp.precondition, exp.action, exp.rationale, scope=exp.scope, status=exp.status,
                          provenance=exp.provenance)
        self._guard(lambda: self.lamar.add(twin))
        if not self._guard(lambda: self.known.look(exp, but=stored, after=since))[0]:
            return stored  # no lesson of the scope but ours is a near-copy: none came first
        for other in self._guard(lambda: self.lamar.experiences(scope=dict(exp.scope))):
            if other.id == stored:
                return stored
            if same_arm(other, exp):
                self._guard(lambda o=other: self.lamar.retire(stored, f"proposed at the same time as {o.id}, "
                                                              "a near-copy of it, which was added first"))
                refuse_held(other)
        return stored

    def import_rules(self, folder: Any = None, apply: Any = False) -> ImportResult:
        """The project's rules files as candidate lessons; stored only with `apply`.

        Only the server's own folder and the folders below it are read: a client cannot make the
        server read files elsewhere on its machine.
        """
        from lamar.rules import find_rule_files, import_rules

        apply = flag(apply, "apply")
        where = rules_folder(self.reader.cwd, folder)
        if not find_rule_files(where):  # the core's advice names --file, which this tool does not take
            raise ToolError(f"no rules file in {where} (CLAUDE.md, AGENTS.md, Cursor or Copilot rules; a link that "
                            "leads out of the folder is not followed): pass as folder a sub-folder that has one, "
                            "or tell the user that this project has no rules file to import")
        plan = self._guard(lambda: import_rules(self.lamar, where, apply=apply))
        return ImportResult(
            project=neutralize(plan.project), files=[neutralize(f) for f in plan.files], applied=plan.applied,
            lessons=[ImportedRule(lesson_id=e.id, text=neutralize(e.render()), file=neutralize(e.provenance["file"]),
                                  line=e.provenance["line"]) for e in plan.lessons],
            skipped=[SkippedBlock(file=neutralize(r.file), line=r.line, text=neutralize(r.text[:300]),
                                  why=neutralize(why)) for r, why in plan.skipped],
            claude_reads=[neutralize(f) for f in plan.claude_reads])

    def lesson_json(self, lesson_id: str) -> str:
        """One lesson as JSON (the lamar://lessons/{id} resource)."""
        return self.evidence(lesson_id).model_dump_json(indent=2)

    def lessons_json(self, cursor: str | None = None) -> str:
        """A page of every lesson as JSON, from `cursor` on, with the URI of the next (the lamar://lessons
        resources)."""
        return resource_page(self.lessons(cursor=cursor)).model_dump_json(indent=2)


def _candidate(precondition: str, action: str, rationale: str, where: dict[str, str], client: str | None,
               line: int | None = None) -> Experience:
    """A lesson an agent proposed, as a candidate with the agent's provenance, after the safety screen."""
    unsafe = lesson_refusal(precondition, action, rationale, where)
    if unsafe:
        raise ToolError(f"lesson refused, nothing was stored: it {unsafe}. Lessons are shown to agents as "
                        "notes: state the situation and what to do in plain words, with no credentials "
                        "and no instructions to the model")
    return Experience(precondition, action, rationale, scope=Scope(where), status=Status.CANDIDATE,
                      id=_lesson_id(precondition, action, where),
                      provenance={**AGENT_PROVENANCE, **({"client": client[:MAX_KEY]} if client else {}),
                                  **({"line": line} if line is not None else {})})


def _stored_before(fresh: list[Experience], ids: list[str]) -> str:
    """What a call of many lessons stored before one of them was refused in the middle of the adds."""
    if not ids:
        return "none of the lessons was stored"
    lines = ", ".join(f"line {e.provenance['line']} as {i}" for e, i in zip(fresh, ids))
    return f"the lessons before it were stored ({lines}), none after it: the same call made again stores the rest"


def _lesson_id(precondition: str, action: str, scope: Mapping[str, str]) -> str:
    """The id follows from the words, as for mined lessons: the same lesson proposed twice is one arm."""
    key = json.dumps([normalize(precondition), normalize(action), sorted(scope.items())])
    return "exp_" + hashlib.sha256(key.encode()).hexdigest()[:16]


__all__ = ["AGENT_PROVENANCE", "LamarTools"]
