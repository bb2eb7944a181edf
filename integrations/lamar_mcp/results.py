"""What the tools return: pydantic models, so every result is structured content with an output schema."""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, Field

from lamar.experience import Experience
from lamar.policy.verdicts import Evidence
from lamar.recall import neutralize


class PreviewRow(BaseModel):
    """One eligible lesson as a dry-run recall sees it (`Lamar.preview`)."""

    lesson_id: str
    text: str = Field(description="'When X, do Y, because Z.', as recall() would show it.")
    wanted: bool = Field(description="The selection's draw wanted it, as one recall's would.")
    chance: float = Field(description="Share of the selection's draws that want it: the chance a recall does now.")
    cold: bool = Field(description="Not yet tried enough: tried first.")
    estimate: float = Field(description="The selection's estimate of its effect on reward in this context.")
    holdout: float = Field(description="The chance it is held out at random when wanted, to measure its effect.")
    verdict: str = Field(description="helps, harms or unknown.")
    lower: float | None = Field(description="Lower confidence bound of its lift (null: unbounded).")
    upper: float | None = Field(description="Upper confidence bound of its lift (null: unbounded).")


class RecallResult(BaseModel):
    """The lessons chosen for one context, and the episode to report."""

    prompt: str = Field(description="The chosen lessons, fenced, to add to your working context "
                                    "(exactly what Recall.as_prompt() returns; empty when none apply).")
    episode_id: str = Field(description="Pass it to report() once you know what the human did.")
    lesson_ids: list[str] = Field(description="Ids of the lessons in `prompt`, best first.")
    context: dict[str, str] = Field(description="The context recalled for: the labels given, and those derived "
                                                "from `text`, spelled as the lessons' scopes spell them.")
    hint: str = Field(description="When no lesson's scope matches the context: the scope labels the lessons use. "
                                  "When only lessons without a scope match while a label given is one no lesson "
                                  "uses: the values the lessons use for its key. Empty otherwise.")
    logged: bool = Field(default=True, description="False for a dry run: no episode was logged (episode_id is "
                                                   "empty, nothing to report).")
    preview: list[PreviewRow] = Field(default_factory=list, description="A dry run only: every eligible lesson, "
                                      "whether it is wanted and why.")


class ReportResult(BaseModel):
    """The outcome that was recorded."""

    episode_id: str
    signal: str = Field(description="shipped, accepted, reasked, corrected or reverted.")
    reward: float = Field(description="What the signal is worth to the lessons of the episode, in [-1, 1].")


class Lesson(BaseModel):
    """One lesson as Lamar holds it, with what was measured about it."""

    id: str
    text: str = Field(description="'When X, do Y, because Z.', as recall() would show it.")
    precondition: str
    action: str
    rationale: str
    scope: dict[str, str] = Field(description="Where it is eligible: every field must equal the context's value.")
    status: str = Field(description="candidate (not yet proven), active, or retired (never injected).")
    source: str = Field(description="Who wrote it: manual, mined (by sleep) or agent (propose_lesson).")
    provenance: dict[str, Any]
    verdict: str = Field(description="helps, harms or unknown: read from anytime-valid confidence bounds.")
    lift: float | None = Field(description="Estimated effect on reward of injecting it (null: no evidence yet, "
                                           "while the interval spans every lift from -2 to +2).")
    lower: float | None = Field(description="Lower confidence bound of the lift (null: unbounded).")
    upper: float | None = Field(description="Upper confidence bound of the lift (null: unbounded).")
    randomized: int = Field(description="Reported episodes whose injection was a logged coin: the evidence.")
    injected: int = Field(
        description="Reported episodes that injected it (as `lamar ls` counts; pending ones are not).")
    held_out: int = Field(description="Reported episodes whose coin held it out (pending ones are not counted).")
    eligible: int
    summary: str = Field(description="The evidence in words: 'lift +0.42, interval [+0.10, +0.80] from 60 randomized "
                                     "episodes', or why there is no lift yet ('no evidence yet: 6 randomized episodes "
                                     "leave every lift from -2 to +2 possible').")


class LessonList(BaseModel):
    """One page of the lessons a call asked for, in the order they were added."""

    count: int = Field(description="How many lessons match the call's filters, on every page.")
    lessons: list[Lesson] = Field(description="This page's lessons.")
    next_cursor: str | None = Field(default=None, description="Pass it as cursor, with the same filters, for "
                                    "the next page; null: this is the last page.")


class LessonsPage(LessonList):
    """One page of every lesson, as the lamar://lessons resources hold it (resources/read has no pages)."""

    next_uri: str | None = Field(default=None, description="Read this URI for the next page (the lessons tool "
                                 "takes next_cursor as its cursor); null: this is the last page.")


class ProposeResult(BaseModel):
    """A lesson an agent proposed, stored as a candidate."""

    lesson_id: str
    status: str = Field(description="Always candidate: a cold arm that outcomes must prove.")
    text: str


class HeldLesson(BaseModel):
    """A proposed lesson that Lamar already held, so it was not stored again."""

    line: int = Field(description="The line of the text that proposed it.")
    lesson_id: str = Field(description="The held lesson's id: evidence() shows what is known about it.")
    status: str = Field(description="The held lesson's status: candidate, active, or retired (never injected).")
    text: str = Field(description="The held lesson, as recall() would show it.")


class ProposeMany(BaseModel):
    """Lessons an agent proposed at once: those stored now as candidates, and those already held."""

    count: int = Field(description="How many lessons were stored by this call.")
    lessons: list[ProposeResult] = Field(description="The lessons stored by this call.")
    held: list[HeldLesson] = Field(default_factory=list, description="Lines whose lesson (the same words in the "
                                   "same scope) Lamar already held, e.g. stored by an interrupted earlier call: "
                                   "not stored again.")


class EraseResult(BaseModel):
    """What an erasure did; the erased text is nowhere in it."""

    lesson_id: str
    by: str = Field(description="Who the audit says erased it.")
    reason: str
    episodes: int = Field(description="Episodes whose contexts were blanked (0 unless contexts was true).")
    events: int = Field(description="Stored events rewritten.")


class ImportedRule(BaseModel):
    """One rule of the project's files and the lesson it becomes."""

    lesson_id: str
    text: str = Field(description="The lesson as recall would show it.")
    file: str
    line: int


class SkippedBlock(BaseModel):
    """A block of the project's files that did not become a lesson, and why."""

    file: str
    line: int
    text: str
    why: str


class ImportResult(BaseModel):
    """What import_rules found in the project's CLAUDE.md, AGENTS.md, Cursor and Copilot rules."""

    project: str = Field(description="The project the lessons are scoped to.")
    files: list[str]
    applied: bool = Field(description="Whether the lessons were stored (false: only shown).")
    lessons: list[ImportedRule]
    skipped: list[SkippedBlock]
    claude_reads: list[str] = Field(default_factory=list, description=(
        "The files of `files` that Claude Code reads into its sessions itself (a CLAUDE.md, a CLAUDE.local.md, "
        "what they import): their rules reach Claude also when recall holds them out, so their evidence cannot "
        "show whether they help. Tell the user, who can take the rules out of those files or list them under "
        "claudeMdExcludes in .claude/settings.local.json."))


def preview_row(row: Any) -> PreviewRow:
    """The tool's view of one row of `Lamar.preview` (`lamar.preview.PreviewLesson`)."""
    return PreviewRow(lesson_id=neutralize(row.id), text=neutralize(row.text), wanted=row.wanted, chance=row.chance,
                      cold=row.cold, estimate=row.estimate, holdout=row.holdout, verdict=row.verdict.value,
                      lower=_bound(row.lower), upper=_bound(row.upper))


def _bound(value: float) -> float | None:
    return value if math.isfinite(value) else None


def lesson_of(exp: Experience, ev: Evidence) -> Lesson:
    """The tool's view of a stored lesson and its evidence."""
    data = ev.to_dict()
    return Lesson(
        id=neutralize(exp.id),
        text=neutralize(exp.render()),
        # What a model reads is neutralized as in recall's prompt: no fence, role marker or template token.
        precondition=neutralize(exp.precondition),
        action=neutralize(exp.action),
        rationale=neutralize(exp.rationale),
        # Scope, provenance and ids come from agents and files too: a model reads them as it reads the text.
        scope={neutralize(k): neutralize(v) for k, v in exp.scope.items()},
        status=exp.status.value,
        source=neutralize(str(exp.provenance.get("source", "manual"))),
        provenance=_neutral(dict(exp.provenance)),
        verdict=ev.verdict.value,
        lift=_number(data["lift"]),
        lower=_number(data["lower"]),
        upper=_number(data["upper"]),
        randomized=ev.randomized,
        injected=ev.injected,
        held_out=ev.held_out,
        eligible=ev.eligible,
        summary=ev.summary(),
    )


def _neutral(value: Any) -> Any:
    """Every string inside a JSON value neutralized, keys included; numbers and booleans as they are."""
    if isinstance(value, str):
        return neutralize(value)
    if isinstance(value, dict):
        return {neutralize(str(k)): _neutral(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_neutral(v) for v in value]
    return value


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, (int, float)) else None


__all__ = ["EraseResult", "HeldLesson", "ImportResult", "ImportedRule", "Lesson", "LessonList", "PreviewRow",
           "ProposeMany", "ProposeResult", "RecallResult", "ReportResult", "SkippedBlock", "lesson_of", "preview_row"]
