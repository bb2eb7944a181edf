"""The `evidence` and `lessons` tools, over stdio with the SDK's client, give no lift while a lesson's few
randomized episodes leave every lift from -2 to +2 possible, and say so in words a model reads."""

from __future__ import annotations

from pathlib import Path

from lamar import Experience, Lamar, Signal
from lamar_mcp.launch import stdio_session


def _barely_measured(path: Path) -> tuple[str, float]:
    """A store whose lesson shipped every time it went in: 6 randomized episodes, a lift near +2 that means nothing."""
    with Lamar(str(path), seed=5, holdout=0.5) as lam:
        exp_id = lam.add(Experience("a lint error", "run the formatter first"))
        for _ in range(6):
            rec = lam.recall({"task": "lint"})
            lam.report(rec.episode_id, Signal.SHIPPED if exp_id in rec.ids else Signal.REVERTED)
        ev = lam.evidence(exp_id)
    assert ev.randomized == 6 and (ev.lower, ev.upper) == (-2.0, 2.0) and ev.lift > 1.9, ev
    return exp_id, ev.lift


async def test_evidence_and_lessons_give_no_lift_while_the_interval_spans_every_lift(tmp_path: Path) -> None:
    exp_id, _ = _barely_measured(tmp_path / "s.db")
    said = "no evidence yet: 6 randomized episodes leave every lift from -2 to +2 possible"
    async with stdio_session(tmp_path / "s.db") as session:
        tools = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert "summary" in tools["evidence"].output_schema["required"]
        ev = (await session.call_tool("evidence", {"lesson_id": exp_id})).structured_content
        assert (ev["lift"], ev["lower"], ev["upper"], ev["summary"]) == (None, -2.0, 2.0, said), ev
        listed = (await session.call_tool("lessons", {})).structured_content
        assert [(row["lift"], row["summary"]) for row in listed["lessons"]] == [(None, said)], listed


async def test_a_measured_lift_is_given_with_its_interval_in_words(tmp_path: Path) -> None:
    with Lamar(str(tmp_path / "s.db"), seed=5, holdout=0.5) as lam:
        exp_id = lam.add(Experience("a lint error", "run the formatter first"))
        for _ in range(60):
            rec = lam.recall({"task": "lint"})
            lam.report(rec.episode_id, Signal.SHIPPED if exp_id in rec.ids else Signal.REVERTED)
        now = lam.evidence(exp_id)
    assert now.measured, now
    async with stdio_session(tmp_path / "s.db") as session:
        ev = (await session.call_tool("evidence", {"lesson_id": exp_id})).structured_content
    assert ev["lift"] == now.lift and ev["summary"].startswith(f"lift {now.lift:+.2f}, interval ["), ev
