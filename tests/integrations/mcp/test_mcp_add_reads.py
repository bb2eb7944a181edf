"""What a proposal reads of the store: the events since the last look and the lessons they added, not
every lesson again, so filling a store one lesson at a time stays linear; and what another engine
on the store adds, retires or scopes is still seen by the next proposal."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from lamar import Experience, Lamar, Scope
from lamar_mcp.bench import counting as _counting
from lamar_mcp.tools import LamarTools

_WARM = 60
_COUNTED = 20


def _propose(tools: LamarTools, i: int, many: bool) -> None:
    when, then = f"the build of module {i} fails on a clean checkout", f"regenerate the stubs of package {i}"
    if many:
        assert tools.propose_lessons(f"- When {when}, {then}.\n", {"project": "shop"}).count == 1
    else:
        tools.propose_lesson(when, then, scope={"project": "shop"})


@pytest.mark.parametrize("many", [False, True], ids=["propose_lesson", "propose_lessons"])
def test_each_add_reads_a_bounded_number_of_lessons_however_many_are_stored(tmp_path: Path, many: bool) -> None:
    with Lamar(str(tmp_path / "reads.db")) as lam:
        tools = LamarTools(lam)
        for i in range(_WARM):
            _propose(tools, i, many)
        handed = _counting(lam)
        for i in range(_WARM, _WARM + _COUNTED):
            _propose(tools, i, many)
        # One lesson an add (the one it stored, read back as the engine holds it); reading the
        # scope's lessons again after each add would hand out some _WARM of them an add.
        assert handed[0] <= 2 * _COUNTED, handed[0]
        assert len(lam.experiences(scope={"project": "shop"})) == _WARM + _COUNTED


@pytest.mark.parametrize("store_location", ["sqlite", "postgres-fold"], indirect=True)
def test_what_another_engine_changes_is_seen_by_the_next_proposal(store_location: str) -> None:
    with Lamar(store_location) as lam, Lamar(store_location) as other:
        tools = LamarTools(lam)
        tools.propose_lesson("a test fails only in CI", "compare the CI locale with yours", scope={"project": "a"})
        held = other.add(Experience("the Go build fails on a fresh clone", "run go mod download first",
                                    scope=Scope(project="shop")))
        with pytest.raises(ToolError, match=f"already holds this lesson as {held} \\(active\\)"):
            tools.propose_lesson("the Go build fails on a fresh clone", "always run go mod download first",
                                 scope={"project": "shop"})
        assert tools.propose_lesson("a flaky test", "rerun it alone", scope={"Project": "SHOP"}).text
        assert lam.experiences(scope={"project": "shop"})[-1].precondition == "a flaky test"  # spelled as held
        other.retire(held, "by hand")
        with pytest.raises(ToolError, match=f"already holds this lesson as {held} \\(retired\\)"):
            tools.propose_lesson("the Go build fails on a fresh clone", "always run go mod download first",
                                 scope={"project": "shop"})
        other.revive(held, "by hand")
        other.edit(held, action="clear the module cache")
        stored = tools.propose_lesson("the Go build fails on a fresh clone", "run go mod download first",
                                      scope={"project": "shop"})
        assert stored.lesson_id != held  # the words it was held under are no longer a lesson's


def test_a_look_finds_exactly_the_lessons_a_scan_of_every_lesson_finds() -> None:
    # The look compares a proposal only with the lessons that share its rarest words: it must
    # answer as a comparison with every lesson of the scope would. Half the proposals are a
    # stored lesson with a word added, dropped or changed, so many fall on either side of the line.
    from lamar.sleep.similarity import normalize
    from lamar_mcp.held import forgetting, lesson_words, near

    rng = random.Random(7)
    words = ["build", "fails", "cache", "clear", "not", "tests", "run", "go", "module", "the", "it", "don't", "7"]

    def tweaked(text: str) -> str:
        said = text.split()
        at = rng.randrange(len(said) + 1)
        change = rng.choice(["add", "drop", "swap", "keep"])
        if change == "add" or len(said) < 2:
            said.insert(at, rng.choice(words))
        elif change == "drop":
            del said[at - 1]
        elif change == "swap":
            said[at - 1] = rng.choice(words)
        return " ".join(said)

    def lesson(stored: list[Experience]) -> Experience:
        if stored and rng.random() < 0.5:
            base = rng.choice(stored)
            return Experience(tweaked(base.precondition), tweaked(base.action), scope=base.scope)
        text = [rng.choice(["do it", "the it", "it"]) if rng.random() < 0.2  # no content word
                else " ".join(rng.choices(words, k=rng.randint(1, 6))) for _ in range(2)]
        return Experience(*text, scope=Scope(project=rng.choice("ab")))

    @forgetting
    def check(lam: Lamar, tools: LamarTools) -> int:
        found = 0
        for _ in range(400):
            every = lam.experiences()
            exp = lesson(every)
            scan = any(o.scope.items_key == exp.scope.items_key and (
                o.id == exp.id or (normalize(o.precondition), normalize(o.action)) == (
                    normalize(exp.precondition), normalize(exp.action)) or near(lesson_words(o), exp))
                for o in every)
            assert tools.known.look(exp)[0] == scan, exp
            found += scan
            if rng.random() < 0.3:
                lam.add(exp)
        return found

    with Lamar() as lam:
        assert 40 < check(lam, LamarTools(lam)) < 360
