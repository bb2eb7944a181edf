"""report over stdio with the SDK's client: the words a model types for what the human did."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lamar import Lamar
from lamar_mcp.launch import stdio_session
from tests.integrations.mcp.conftest import events

READ = {"shipped": "shipped", "Shipped": "shipped", " SHIPPED. ": "shipped", "ship it": "shipped",
        "Ship-it!": "shipped", "merged": "shipped", "deployed": "shipped", "accepted": "accepted",
        "accept": "accepted", "kept it": "accepted", "re-asked": "reasked", "asked again": "reasked",
        "corrected": "corrected", "revert": "reverted", "rolled back": "reverted", "undid it": "reverted"}
# A word that could name two outcomes ("undone": reverted, or not done yet), or a negation, is refused
# rather than guessed.
REFUSED = ["not shipped", "undone", "fixed", "correct", "done", "great", "shipped and reverted", "", "shipp"]


async def test_the_words_a_model_types_for_an_outcome_are_read_as_the_one_they_name(store: Path) -> None:
    async with stdio_session(store, "--seed", "1") as session:
        for said, signal in READ.items():
            episode = (await session.call_tool("recall", {"context": {"project": "trace"}})).structured_content
            done = await session.call_tool("report", {"episode_id": episode["episode_id"], "signal": said})
            assert not done.is_error, (said, done.content[0].text)
            assert done.structured_content["signal"] == signal, said
        episode = (await session.call_tool("recall", {"context": {"project": "trace"}})).structured_content
        before = events(store)
        for said in REFUSED:
            refused = await session.call_tool("report", {"episode_id": episode["episode_id"], "signal": said})
            assert refused.is_error, said
            assert "signal must be one of shipped, accepted, reasked, corrected, reverted" in refused.content[0].text
        assert events(store) == before
    with Lamar(str(store)) as lam:
        assert lam.stats()["reports"] == len(READ)


def test_a_misspelt_outcome_is_answered_with_the_signal_it_is_close_to() -> None:
    """A model that typed "shipp" got the bare list; a word that could name two outcomes gets no guess."""
    from mcp.server.mcpserver.exceptions import ToolError

    from lamar_mcp.tools import LamarTools

    with Lamar(":memory:") as lam:
        tools = LamarTools(lam)
        for said, near in (("shipp", "shipped"), ("revrted", "reverted"), ("acepted", "accepted")):
            with pytest.raises(ToolError, match=re.escape(f"got {said!r} (did you mean {near!r}?)")):
                tools.report("ep_1", said)
        for said in ("fixed", "merge", "correct", "done"):
            with pytest.raises(ToolError, match="signal must be one of") as refused:
                tools.report("ep_1", said)
            assert "did you mean" not in str(refused.value), said


# Real words a letter or two from a signal's name, each meaning something else: a guess by spelling turned
# "completed" (a success) into corrected, and a model told "did you mean 'corrected'?" reports it.
NOT_MISSPELT = ["completed", "user rejected", "rejected", "skipped", "stopped", "praised", "retried", "reopened",
                "selected", "deleted", "asked", "not shipped", "accepted and then reverted"]
# A phrase that names one outcome in a word of its own, or the word a description glosses it with.
NAMED = {"the user shipped it": "shipped", "The user merged it": "shipped", "the user corrected it": "corrected",
         "user accepted": "accepted", "re-asking": "reasked", "Shiped": "shipped", "shipp": "shipped"}


async def test_a_refused_outcome_is_guessed_only_from_a_word_that_names_one(store: Path) -> None:
    async with stdio_session(store, "--seed", "1") as session:
        episode = (await session.call_tool("recall", {"context": {"project": "trace"}})).structured_content
        before = events(store)
        for said in NOT_MISSPELT:
            refused = await session.call_tool("report", {"episode_id": episode["episode_id"], "signal": said})
            assert refused.is_error and "did you mean" not in refused.content[0].text, (said, refused.content[0].text)
        for said, near in NAMED.items():
            refused = await session.call_tool("report", {"episode_id": episode["episode_id"], "signal": said})
            assert refused.is_error, said
            assert refused.content[0].text.endswith(f"(did you mean {near!r}?)"), (said, refused.content[0].text)
        assert events(store) == before


def test_a_gloss_that_goes_on_with_another_verb_names_no_outcome() -> None:
    """"kept" glosses accepted, but "the user kept asking the same thing" is a re-ask: told "did you mean
    'accepted'?", a model reports the opposite of what the user did."""
    from mcp.server.mcpserver.exceptions import ToolError

    from lamar_mcp.tools import LamarTools

    with Lamar(":memory:") as lam:
        tools = LamarTools(lam)
        for said in ("the user kept asking the same thing", "user kept rephrasing", "the user kept going"):
            with pytest.raises(ToolError, match="signal must be one of") as refused:
                tools.report("ep_1", said)
            assert "did you mean" not in str(refused.value), said
        for said, near in (("the user kept the change", "accepted"), ("the user merged it", "shipped")):
            with pytest.raises(ToolError, match=re.escape(f"(did you mean {near!r}?)")):
                tools.report("ep_1", said)


async def test_reporting_a_dry_runs_empty_episode_id_says_a_dry_run_logs_nothing(store: Path) -> None:
    async with stdio_session(store) as session:
        preview = await session.call_tool("recall", {"context": {"project": "trace"}, "dry_run": True})
        assert preview.structured_content["episode_id"] == ""
        before = events(store)
        refused = await session.call_tool("report", {"episode_id": preview.structured_content["episode_id"],
                                                     "signal": "shipped"})
    assert refused.is_error and "dry_run logs no episode" in refused.content[0].text, refused.content
    assert events(store) == before
