"""`import_rules`: a project's rules files as candidate lessons, one per rule, each an arm with
its own control group."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lamar.experience import Experience, Scope, Status
from lamar.projects import project_root
from lamar.rules.parse import DESCRIBES, MAX_RULE, Rule, clean, condition, parse_rules
from lamar.rules.sources import UNREADABLE, find_rule_files, read_sources
from lamar.storable import whole_number

if TYPE_CHECKING:
    from lamar.engine import Lamar
    from lamar.sleep.similarity import LessonWords

PROVENANCE_SOURCE = "rules"
FOLDER_KEY = "folder"  # the scope key of a sub-folder's rules: "frontend/" for frontend/CLAUDE.md
CONDITION_KEYS = ("task", "error_class")  # the scope keys a rule's own condition may set (`condition_scope`)
# The refusal of a folder with no rules file says how to name one in Python's terms; a front end
# with its own way to name a file (the CLI's --file) puts that in its place.
NAME_A_FILE = "name one with files=[PATH, ...]"
_MODEL_TOKENS = 4096
_CODE = re.compile(r"(?<!`)`++([^`]++)`+")  # a run of backticks is read once, from its start, at its length
# A lesson's content words, the commands its action quotes, its action's words without the quotes, and the words
# of when or where it holds ("on Fridays", "during a release freeze").
_Read = tuple["LessonWords", list[str], str, frozenset[str]]
# A rule that adds when or where ("Don't push to main on Fridays") says less than one without ("Don't push to
# main"): the two are two rules, however few words they differ in.
_WHEN_OR_WHERE = re.compile(r"\b(?:on|in|at|during|outside|inside|within|for|from|except|between)\s+"
                            r"(?:(?:the|a|an|any|every|each|your|our|its|their)\s+)?([\w-]+)", re.IGNORECASE)
# "Never X" and "Don't X" forbid alike: as a negation each would keep the two apart.
_NEVER = re.compile(r"\bnever\b", re.IGNORECASE)


@dataclasses.dataclass
class ImportPlan:
    """What `import_rules` found: the lessons it adds (or would add) and the blocks it left out.

    Attributes:
        project: the project the lessons are scoped to.
        files: the files read, relative to the project folder.
        lessons: one candidate lesson per rule, in file order.
        skipped: (rule or block, why it was not added); a file that is not UTF-8 text is one entry
            with line 0 and empty text, and the other files' rules are still added.
        applied: whether the lessons were stored.
        claude_reads: the files of `files` that Claude Code reads into its sessions itself (a
            CLAUDE.md, a CLAUDE.local.md and the files they import): their rules reach Claude on
            the prompts where recall holds them out too.
    """

    project: str
    files: list[str]
    lessons: list[Experience]
    skipped: list[tuple[Rule, str]]
    applied: bool = False
    claude_reads: list[str] = dataclasses.field(default_factory=list)


def project_name(folder: str | os.PathLike[str]) -> str:
    """The project's name as the Claude Code hooks derive it: the git top-level folder's name, else the folder's.

    Raises:
        InvalidArgument: `folder` is the file system's root or the home folder outside git, where the
            hooks and `lamar mcp` name no project (`lamar.projects.project_of`).
    """
    from lamar.projects import project_of

    name = project_of(folder)
    if name is None:
        from lamar._errors import InvalidArgument

        where = Path(folder).resolve()
        raise InvalidArgument(f"{where} is {'the root folder' if where.parent == where else 'your home folder'}, "
                              "outside any git repository: the hooks and `lamar mcp` name no project there, so "
                              "lessons scoped to a project named from it would never be recalled; name the project "
                              "(--project NAME, or project= in Python), or run in the project's folder")
    return name


def chosen_project(project: Any, folder: str | os.PathLike[str]) -> str:
    """`project`, or the project's name derived from `folder` when it is None; a blank one (an unset
    shell variable) would scope every lesson to no project anyone works in, so it is refused."""
    from lamar._errors import InvalidArgument, echoed

    if project is None:
        return project_name(folder)
    if not isinstance(project, str) or not project.strip():
        raise InvalidArgument(f"project is empty: name the project the lessons belong to, or pass None for the "
                              f"git top-level folder's name; got {echoed(project)}")
    return project


def import_rules(lamar: Lamar, folder: str | os.PathLike[str] = ".", *, files: Sequence[str | os.PathLike[str]] = (),
                 project: str | None = None, model: Any = None, apply: bool = False) -> ImportPlan:
    """Read a project's rules files and turn each rule into a candidate lesson scoped to the project.

    Nothing is stored unless asked (`apply=True`): the plan says what would be added and what was
    left out, with why. A model, when given, only restates prose blocks the parser left out; what
    it returns is checked against the block's own words and dropped with a reason when it strays.

    Args:
        lamar: the engine whose lessons the rules are checked against (and added to with `apply`).
        folder: the project folder (its CLAUDE.md, AGENTS.md, .cursor/rules, Copilot instructions).
        files: read these files instead of looking for the usual ones.
        project: the scope's project (default: the git top-level folder's name, as the hooks use).
        model: anything with `complete(prompt, *, max_tokens)`; restates prose the parser left out.
        apply: store the lessons (default: only plan).

    Returns:
        The plan; `lessons` were stored when `applied`.

    Raises:
        InvalidArgument: no rules file in the folder, a named file is missing or unreadable, no
            file is UTF-8 text, or no `project` is given for the file system's root or the home folder
            outside git, which name none (`lamar.projects.project_of`).
        ModelError: the model call failed.
    """
    from lamar._errors import InvalidArgument

    root = Path(folder).expanduser()
    if project is not None:
        chosen_project(project, ".")  # a blank project is refused before any file is read
    try:  # a NUL in the folder's name raises ValueError, a name too long for the file system OSError
        where = root.resolve()
        paths = [Path(f).expanduser() for f in files] if files else find_rule_files(root)
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"cannot look for rules files in that folder: {exc}; name a folder that exists") from exc
    if not paths and where.is_file():  # `lamar import-rules CLAUDE.md`: the file meant, where the folder goes
        raise InvalidArgument(f"{where} is a file, not a project folder: name the folder that holds it; to read "
                              f"this file alone, {NAME_A_FILE}")
    if not paths and not where.is_dir():
        raise InvalidArgument(f"no folder {where}: check the path, or name the project folder that holds the rules "
                              "files (default: the current folder)")
    if not paths:
        raise InvalidArgument(f"no rules file in {where}: looked for CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md, "
                              "AGENTS.md, .github/copilot-instructions.md, .cursorrules and .cursor/rules/*.mdc, "
                              "and for CLAUDE.md, CLAUDE.local.md and AGENTS.md in its sub-folders (a link that "
                              f"leads out of the folder is not followed); {NAME_A_FILE}")
    unread: list[tuple[str, str]] = []
    try:
        sources = read_sources(paths, project_root(root), unread=unread, named=bool(files))
    except PermissionError as exc:  # a file the user named: reading the others instead would hide the mistake
        raise InvalidArgument(f"cannot read the rules: {exc.filename} is {UNREADABLE}") from exc
    except FileNotFoundError as exc:  # a file named in `files`: the usual ones are listed only when they exist
        raise InvalidArgument(f"cannot read the rules: no file {exc.filename}: check its path, or leave it out to "
                              "read the folder's usual rules files") from exc
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"cannot read the rules: {exc}") from exc
    if not sources and unread:
        raise InvalidArgument("cannot read the rules: " + "; ".join(f"{file} is {why}" for file, why in unread))
    name = chosen_project(project, root)
    rules: list[Rule] = []
    # A file that cannot be read is reported as a whole (line 0); the other files' rules still count.
    skipped: list[tuple[Rule, str]] = [(Rule("", file, 0), why) for file, why in unread]
    for source in sources:
        found, left = parse_rules(source.text, source.name)
        if source.folder:
            found = [dataclasses.replace(r, folder=source.folder) for r in found]
            left = [(dataclasses.replace(r, folder=source.folder), why) for r, why in left]
        rules += found
        skipped += left
    skipped, screened = _screened(skipped, name)
    skipped = _scrubbed(skipped)  # before a model reads them, and as they are listed
    if model is not None and skipped:
        from lamar.rules.takebacks import is_taken_back

        # A rule the file takes back is no prose to restate: a model would write it out as a live rule.
        withdrawn = [(rule, why) for rule, why in skipped if is_taken_back(why)]
        prose = [(rule, why) for rule, why in skipped if not is_taken_back(why)]
        restated, skipped = _restate(model, prose) if prose else ([], [])
        rules += restated
        skipped += withdrawn
    skipped += _scrubbed(screened)
    lessons, refused = _lessons(lamar, rules, name)
    plan = ImportPlan(name, [s.name for s in sources], lessons, skipped + _scrubbed(refused),
                      claude_reads=[s.name for s in sources if s.claude])
    if apply:
        _add(lamar, plan, rules)
    return plan


def _add(lamar: Lamar, plan: ImportPlan, rules: list[Rule]) -> None:
    """Store the plan's lessons. One another import stored since the plan was made (two at once plan
    the same ids) is held as this one wanted: it is listed as skipped, not raised."""
    from lamar._errors import InvalidExperience, UnknownExperience

    added = []
    for exp in plan.lessons:
        try:
            lamar.add(exp)
        except InvalidExperience as exc:
            try:
                lamar.get(exp.id)
            except UnknownExperience:
                raise exc from None  # refused for another reason than being stored already
            where = (exp.provenance["file"], exp.provenance["line"])
            rule = next((r for r in rules if (r.file, r.line) == where), Rule(exp.action, *where))
            plan.skipped.append((rule, f"already held as {exp.id} (added by another import meanwhile)"))
            continue
        added.append(exp)
    plan.lessons, plan.applied = added, True


def lesson_of(rule: Rule, project: str) -> Experience:
    """The candidate lesson for one rule: "When working on <project> (<context>), <the rule as written>.",
    or "When X, Y." for a rule that states its own condition ("When X, Y", "If X, Y", "Whenever X: Y"),
    scoped also to the failing task or error class that condition names (`condition_scope`)."""
    from lamar.rules.headings import situational
    from lamar.safety.prohibitions import forbids, opens_forbidding

    # "Core Development Rules" would open every lesson of its file alike; "Testing" says when it holds.
    # A heading that forbids ("Never") is no situation where the action says it; a paragraph keeps it.
    carried = bool(rule.forbidden_by) or opens_forbidding(rule.text)
    said = tuple(part for part in rule.context if situational(part, project) and not (carried and forbids(part)))
    context = (rule.folder, *said) if rule.folder else said
    where = f"working on {project}" + (f" ({' › '.join(context)})" if context else "")
    scope = {"project": project}
    written = rule.text.rstrip(".")
    # The rule's own condition is the situation it names; prefixing the project would say "When" twice.
    # The scope still holds the lesson to its project (and folder).
    stated = condition(written)
    where, action = stated or (where, written)
    if rule.forbidden_by:
        # "## Never" then "- push to main": the lesson says "never: push to main", as the file meant it.
        action = f"{rule.forbidden_by}: {action}"
        written = f"{rule.forbidden_by}: {written}"
    # The id is of the rule's words: "Never push." and "Never push" are one lesson.
    # A nested CLAUDE.md's rule holds in its folder only: the same words elsewhere are another lesson.
    key = json.dumps([" ".join(written.lower().split()), sorted(scope.items()),
                      *([rule.folder] if rule.folder else [])])
    provenance: dict[str, Any] = {"source": PROVENANCE_SOURCE, "file": rule.file, "line": rule.line, "by": rule.by}
    if rule.folder:  # recalled where the hooks say the work is (the context's `folder`), as Claude Code reads it
        scope[FOLDER_KEY] = rule.folder
    if stated:  # after the id, which is of the rule's words: a store holding it scoped to the project holds this
        scope.update(condition_scope(stated[0]))
    return Experience(where, action, "", scope=Scope(scope), status=Status.CANDIDATE,
                      id="exp_" + hashlib.sha256(key.encode()).hexdigest()[:16], provenance=provenance)


def condition_scope(condition: str) -> dict[str, str]:
    """The labels a rule's condition names as the hooks derive them from a prompt: a failing task
    ("a test fails" gives task=tests_fail) and an error class ("you see a KeyError"). A condition
    they cannot tell ("working on the API", "refactoring") names none and stays in the lesson's words.

    >>> condition_scope("the build fails after a dependency bump"), condition_scope("working on the API")
    ({'task': 'build_fails'}, {})
    """
    from lamar.tasks import FAILING_TASKS, error_class, task_class

    labels = {"task": task} if (task := task_class(condition)) in FAILING_TASKS else {}
    # A prompt's error class is the first error it names: a condition naming two holds for either.
    if (error := error_class(condition)) is not None and error_class(condition.replace(error, " ")) is None:
        labels["error_class"] = error
    return labels


def _lessons(lamar: Lamar, rules: list[Rule], project: str) -> tuple[list[Experience], list[tuple[Rule, str]]]:
    """One lesson per rule, minus repeats within the import, lessons already held, and refused text."""
    import shlex
    from collections import Counter

    from lamar.safety.lessons import lesson_refusal
    from lamar.sleep.similarity import NEAR_DUPLICATE

    held = [e for e in lamar.experiences()
            if e.scope.get("project") == project and set(e.scope) <= {"project", FOLDER_KEY, *CONDITION_KEYS}]
    by_id = {e.id: e for e in held}
    # Each lesson's words and commands are read once, not once per pair, and only lessons of one scope
    # are compared: a folder's copy of another folder's rule is the one recalled in that folder.
    from lamar.rules.nearby import Nearby

    lessons = [lesson_of(rule, project) for rule in rules]
    reads = [_read(exp) for exp in lessons]
    held_reads = [(e, _read(e)) for e in held]
    # Words in one order, the rarest first: a rule is compared only with those sharing one of its rarest words.
    counts = Counter(word for read in (*reads, *(r for _, r in held_reads)) for word in read[0].action_words)

    def rank(word: str) -> tuple[int, str]:
        return counts[word], word

    scopes: dict[tuple[tuple[str, str], ...], tuple[Nearby[Experience], Nearby[Rule]]] = {}
    for e, read in held_reads:
        scopes.setdefault(e.scope.items_key, (Nearby(rank), Nearby(rank)))[0].add(e, read)
    out: list[Experience] = []
    skipped: list[tuple[Rule, str]] = []
    first: dict[str, Rule] = {}
    plain: set[str] | None = None  # the ids of this import's rules that no prohibition heads, once one does

    def near(a: _Read, b: _Read) -> bool:
        # A rule's commands are exact: `ruff check .` and `ruff check . --fix` share their words, not their effect.
        # "run `make test`" in CLAUDE.md is "run make test" in .cursorrules: a command quoted on one side only
        # is the same command when the other side says it word for word.
        same = a[1] == b[1] or (not a[1] and all(f" {c} " in a[2] for c in b[1])) \
            or (not b[1] and all(f" {c} " in b[2] for c in a[1]))
        qualifies = (a[0].action_words ^ b[0].action_words) & (a[3] | b[3])
        return same and not qualifies and a[0].similarity(b[0]) >= NEAR_DUPLICATE

    for rule, exp, read in zip(rules, lessons, reads):
        if exp.id in first:
            other = first[exp.id]
            skipped.append((rule, f"the same rule as {other.file}:{other.line}"))
            continue
        unsafe = lesson_refusal(exp.precondition, exp.action, exp.rationale, dict(exp.scope))
        if unsafe:
            skipped.append((rule, f"refused: it {unsafe}"))
            continue
        stored, taken = scopes.setdefault(exp.scope.items_key, (Nearby(rank), Nearby(rank)))
        # A rule under "## Never" was stored by its words alone before it carried the heading: that lesson is
        # this one, unless the same words stand in this import without a prohibition over them.
        unlabelled = lesson_of(dataclasses.replace(rule, forbidden_by=""), project).id if rule.forbidden_by else ""
        if unlabelled and plain is None:
            plain = {lesson_of(r, project).id for r in rules if not r.forbidden_by}
        earlier = by_id.get(unlabelled) if unlabelled and unlabelled not in (plain or ()) else None
        # The same id whatever the scope: a store written before sub-folder lessons had a folder scope holds them.
        match = by_id.get(exp.id) or earlier or next((e for e, words in stored.around(read) if near(words, read)), None)
        if match is not None:
            # Held by its words, as imported by an earlier release or edited since: say which condition it keeps.
            kept = (f"; it keeps its condition '{match.precondition}', not the file's '{exp.precondition}' "
                    f"(`lamar edit {match.id} --precondition` changes it)"
                    if match.id == exp.id and match.precondition != exp.precondition else "")
            if match is earlier and match.action != exp.action:
                kept = (f"; it reads '{match.action}', without the '{rule.forbidden_by}' its list is under "
                        f"(`lamar edit {match.id} --action {shlex.quote(exp.action)}` gives it)")
            narrowed = any(match.scope.get(key) != exp.scope.get(key) for key in CONDITION_KEYS)
            if match.id == exp.id and narrowed and not kept:
                kept = (f"; it keeps its scope {_pairs(match.scope)}, not the rule's {_pairs(exp.scope)} "
                        f"(`lamar edit {match.id} --scope {_typed(exp.scope)}` narrows it)")
            skipped.append((rule, f"already held as {match.id} ({match.status.value}){kept}"))
            continue
        # As against the store, so that one import and two give the same lessons.
        copied = next((earlier for earlier, words in taken.around(read) if near(words, read)), None)
        if copied is not None:
            skipped.append((rule, f"a near-copy of {copied.file}:{copied.line}"))
            continue
        first[exp.id] = rule
        taken.add(rule, read)
        out.append(exp)
    return out, skipped


def _pairs(scope: Scope) -> str:
    return ", ".join(f"{key}={value}" for key, value in scope.items())


def _typed(scope: Scope) -> str:
    """The scope as `--scope` takes it, each pair quoted for the shell (`error_class='exit code 1'`)."""
    import shlex

    return " ".join(shlex.quote(f"{key}={value}") for key, value in scope.items())


def _read(exp: Experience) -> _Read:
    """A lesson's content words, the commands its action quotes and the words of when or where it holds, as
    `_lessons` compares them."""
    from lamar.sleep.similarity import LessonWords, content_words

    plain = " ".join(re.sub(r"[,.;:!?](?=\s|$)", " ", exp.action.replace("`", " ")).split())
    said = _WHEN_OR_WHERE.findall(exp.action)
    where = content_words(" ".join(said)) if said else frozenset()
    return LessonWords.of(exp.precondition, _NEVER.sub("do not", exp.action)), \
        [" ".join(c.split()) for c in _CODE.findall(exp.action)], f" {plain} ", where


def _screened(skipped: list[tuple[Rule, str]], project: str) -> tuple[list[tuple[Rule, str]], list[tuple[Rule, str]]]:
    """(the blocks the parser left out, those of them the lesson screen refuses, with its reason): a pasted key
    or "Ignore all previous instructions" reads as describing, and is worth telling apart from prose."""
    from lamar.safety.lessons import lesson_refusal

    kept: list[tuple[Rule, str]] = []
    refused: list[tuple[Rule, str]] = []
    for rule, why in skipped:
        unsafe = lesson_refusal(f"working on {project}", rule.text, "", {}) if why == DESCRIBES else ""
        (refused if unsafe else kept).append((rule, f"refused: it {unsafe}" if unsafe else why))
    return kept, refused


def _scrubbed(skipped: list[tuple[Rule, str]]) -> list[tuple[Rule, str]]:
    """`skipped` with each credential in a block's text redacted: a secret pasted into a rules file is among
    the blocks left out (refused, or describing), which are listed on screen and shown to a `model`."""
    from lamar.safety import scrub

    # Scrubbed once per distinct text: a repetitive file skips the same block thousands of times (each a
    # repeat), and the credential scan is most of an import's time.
    seen: dict[str, str] = {}

    def scrubbed(text: str) -> str:
        if text not in seen:
            seen[text] = scrub(text)[0]
        return seen[text]

    return [(dataclasses.replace(rule, text=scrubbed(rule.text)), why) for rule, why in skipped]


def _restate(model: Any, left: list[tuple[Rule, str]]) -> tuple[list[Rule], list[tuple[Rule, str]]]:
    """Ask the model for the rules inside the blocks the parser left out; keep only what their words support."""
    from lamar.models.protocol import call_model
    from lamar.safety.prohibitions import forbids
    from lamar.sleep.similarity import content_words

    blocks = {i: rule for i, (rule, _) in enumerate(left, start=1)}
    # A block under "## Never" says what not to do: read without its heading, a model would restate it as
    # an instruction to do it.
    forbidding = {i: next((part for part in rule.context if forbids(part)), "") for i, rule in blocks.items()}
    listing = "\n".join(f"[{i}] " + (f"(under the heading {forbidding[i]!r}) " if forbidding[i] else "") + rule.text
                        for i, rule in blocks.items())
    prompt = ("Below are numbered blocks from a project's instructions for coding agents. For each block that "
              "asks the agent to do or avoid something, write that instruction as one short imperative sentence "
              "in the block's own words. Answer with JSON only: a list of objects {\"block\": <number>, "
              "\"rule\": <sentence>}; leave out blocks that only describe.\n\n" + listing)
    answer = call_model(model, prompt, max_tokens=_MODEL_TOKENS)
    rules: list[Rule] = []
    taken: set[int] = set()
    dropped: list[tuple[Rule, str]] = []
    try:
        items = json.loads(answer.strip().removeprefix("```json").removesuffix("```"))
    except ValueError:
        items = None
    if not isinstance(items, list):
        return [], [*left, *((Rule(answer[:200], "model", 0), "the model's answer is not a JSON list"),)]
    for item in items:
        number = item.get("block") if isinstance(item, dict) else None
        text = clean(str(item.get("rule", ""))) if isinstance(item, dict) else ""
        if not whole_number(number) or (source := blocks.get(number)) is None or not text or len(text) > MAX_RULE:
            dropped.append((Rule(text[:200] or json.dumps(item)[:200], "model", 0),
                            ("the model named no block it was given, or no rule of at most "
                            f"{MAX_RULE} characters")))
            continue
        words = content_words(text)
        if not words or len(words & content_words(f"{forbidding[number]} {source.text}")) < 0.6 * len(words):
            dropped.append((Rule(text, source.file, source.line), "the model's rule uses words the block does not"))
            continue
        rules.append(dataclasses.replace(source, text=text, by=str(getattr(model, "model", "") or "model")))
        taken.add(number)
    still = [(rule, why) for i, (rule, why) in enumerate(left, start=1) if i not in taken]
    return rules, still + dropped


__all__ = ["CONDITION_KEYS", "FOLDER_KEY", "PROVENANCE_SOURCE", "ImportPlan", "chosen_project", "condition_scope",
           "import_rules", "lesson_of", "project_name", "project_root"]
