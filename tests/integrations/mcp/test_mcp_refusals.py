"""`lamar_mcp.refusals.guarded`: the engine's refusals as the tool errors a model reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp.server.mcpserver.exceptions import ToolError

from lamar import (
    CorruptStore,
    DuplicateReport,
    Experience,
    Lamar,
    LamarError,
    Signal,
    StoreError,
    UnknownEpisode,
    UnknownExperience,
)
from lamar._errors import advised
from lamar.arguments import unknown
from lamar.state.outcome import REPLACE_ADVICE, refused
from lamar.store.sqlite import SqliteStore
from lamar_mcp.refusals import guarded
from lamar_mcp.tools import LamarTools


def _said(error: LamarError, store: object = None) -> str:
    def call() -> None:
        raise error

    with pytest.raises(ToolError) as caught:
        guarded(call, store)
    return str(caught.value)


def test_an_outcome_that_cannot_be_replaced_is_not_offered_a_replace() -> None:
    # The engine says these outcomes are final; the tool added "a person can replace it with
    # `lamar report ... --replace`", which then fails the same way.
    sealed = DuplicateReport("episode ep_1's outcome (accepted) is final: it was folded into a checkpoint when "
                             "the store was compacted, so it cannot be replaced")
    for error in (sealed, refused("ep_1")):
        said = _said(error)
        assert "--replace" not in said and said.startswith(str(error)), said
    said = _said(advised(DuplicateReport, "episode ep_1 was already reported (shipped)", REPLACE_ADVICE))
    assert said.startswith("episode ep_1 was already reported (shipped); an episode is reported once") and \
        "--replace" in said and "replace=True" not in said


def _tools() -> tuple[Lamar, LamarTools]:
    lam = Lamar(":memory:")
    return lam, LamarTools(lam)


def test_reworded_replace_advice_is_still_cut_by_its_field(monkeypatch: pytest.MonkeyPatch) -> None:
    # The server found the engine's replace=True advice by its words: reworded, it reached the model,
    # which would use it to change its mind about a report.
    monkeypatch.setattr("lamar.state.outcome.REPLACE_ADVICE", "; call report(..., replace=True) to replace it")
    lam, tools = _tools()
    episode = lam.recall({}).episode_id
    tools.report(episode, "shipped")
    with pytest.raises(ToolError) as caught:
        tools.report(episode, "reverted")
    said = str(caught.value)
    assert said.startswith(f"episode {episode} was already reported (shipped); an episode is reported once") and \
        "replace=True" not in said, said


def test_whatifs_reworded_advice_on_an_unknown_lesson_is_cut_by_its_field(monkeypatch: pytest.MonkeyPatch) -> None:
    # whatif's `lamar ls` advice was found by its words: reworded, the command reached the model.
    monkeypatch.setattr("lamar.listing.LS_ADVICE", "; run `lamar ls --all` to list the lesson ids")
    lam, tools = _tools()
    lam.add(Experience("a test is flaky", "pin the seeds"))
    for i in range(40):  # enough reported episodes, each with its coin, for whatif to look at the policy
        episode = lam.recall({"task": "flaky"}).episode_id
        lam.report(episode, Signal.SHIPPED if i % 3 else Signal.CORRECTED)
    for given, note in (("exp_zz", ""), (episode, " (that is an episode id, as recall's episode_id, not a lesson id)")):
        with pytest.raises(ToolError) as caught:
            tools.whatif([f"without:{given}"])
        said = str(caught.value)
        assert said == (f"policy 'without:{given}': no lesson '{given}' in store :memory:{note}; "
                        "call lessons() to list the lesson ids"), said


def test_an_unknown_lesson_is_called_one_by_the_refusals_fields_not_its_words() -> None:
    # The server made "no experience" into "no lesson" by the message's first words: an engine
    # message worded otherwise kept the engine's word, or lost its start.
    refusal = unknown(UnknownExperience, "exp_1", "s.db")
    refusal.args = (str(refusal).replace("no experience", "there is no experience"),)
    assert _said(refusal) == "no lesson 'exp_1' in store s.db; call lessons() to list the lesson ids"


def test_the_engines_advice_on_an_unknown_id_is_cut_by_its_fields_not_its_words() -> None:
    # The server swaps the engine's advice (a Python call) for a tool's. It found that advice by its
    # words, so reworded advice would have stayed beside the tool's, and the kind's note been lost.
    said = _said(unknown(UnknownEpisode, "exp_1", "s.db", ": reworded advice", held_as="lesson"))
    assert said.startswith("no episode 'exp_1' in store s.db (that is a lesson id, not an episode id): pass the "
                           "episode_id that recall() returned") and "reworded" not in said, said
    said = _said(unknown(UnknownExperience, "ep_1", "s.db", "; reworded advice", held_as="episode"))
    assert said == ("no lesson 'ep_1' in store s.db (that is an episode id, as recall's episode_id, not a lesson id); "
                    "call lessons() to list the lesson ids")
    # A message with no parts to cut (another store's own words) is passed on whole.
    assert _said(UnknownEpisode("no episode 'ep_1' is found by its key")).startswith("no episode 'ep_1' is found")


def test_an_id_of_an_episodes_form_is_not_called_one_unless_the_store_holds_that_episode() -> None:
    # The note was judged from the id's form (ep_ and letters), so a made-up or mistyped id got it too.
    from lamar import Lamar
    from lamar_mcp.tools import LamarTools

    lam = Lamar(":memory:")
    tools = LamarTools(lam)
    episode = lam.recall({}).episode_id
    with pytest.raises(ToolError) as caught:
        tools.evidence("ep_0123456789abcdef")
    assert "no lesson 'ep_0123456789abcdef' in store" in str(caught.value) and "that is" not in str(caught.value)
    with pytest.raises(ToolError, match=r"\(that is an episode id, as recall's episode_id, not a lesson id\)"):
        tools.evidence(episode)


def test_a_damaged_read_only_store_is_not_called_unwritable(tmp_path: Path) -> None:
    # A store opened read-only (a file this process cannot write) whose read fails as corrupt: the
    # model was told "cannot be written here; lessons ... still read it", which the failed read belies.
    store = SqliteStore(tmp_path / "store.db")
    try:
        store.read_only = True  # as a file this process may not write opens it
        said = _said(CorruptStore(f"{store.path} is damaged (event 3's checksum does not match): restore it "
                                  "from a backup"), store)
    finally:
        store.close()
    assert "cannot be written" not in said and "still read it" not in said, said
    assert said.startswith(f"{store.path} is damaged") and "tell the user" in said


def test_a_context_within_the_field_limits_but_over_a_contexts_total_is_refused_and_logs_nothing() -> None:
    from lamar import Lamar
    from lamar_mcp.checks import MAX_KEYS, MAX_VALUE
    from lamar_mcp.tools import LamarTools

    lam = Lamar(":memory:")
    tools = LamarTools(lam)
    context = {f"k{i}": "v" * MAX_VALUE for i in range(MAX_KEYS)}
    for dry_run in (False, True):
        with pytest.raises(ToolError, match=r"the context is 16,\d{3} characters long .* at most 4,000"):
            tools.recall(context, dry_run=dry_run)
    assert lam.stats()["episodes"] == 0


def test_whatif_on_too_few_logged_episodes_is_told_to_recall_then_report() -> None:
    from lamar.whatif.log import ADVICE

    lam, tools = _tools()
    lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED)
    for scope, widen in ((None, ""), ({"task": "flaky"}, ", or widen scope or leave it out")):
        if scope:  # widening is advice only where the store holds enough episodes the scope left out
            for _ in range(30):
                lam.report(lam.recall({"task": "deploy"}).episode_id, Signal.SHIPPED)
        with pytest.raises(ToolError) as caught:
            tools.whatif(None, scope)
        said = str(caught.value)
        assert said.endswith("(recall for each task, then report once the human's reaction is known)" + widen), said
        assert ADVICE["recall"] not in said and "lamar" not in said and "since" not in said, said


def test_whatifs_reworded_advice_on_the_log_is_cut_by_its_field(monkeypatch: pytest.MonkeyPatch) -> None:
    # whatif's advice on a log too small (a command, and since/scope the tool does not take) was found
    # by its words: reworded, the commands and `since` reached the model.
    from lamar.whatif.log import ADVICE, WIDEN

    monkeypatch.setitem(ADVICE, "report", "(run `lamar report EPISODE SIGNAL`)")
    monkeypatch.setitem(WIDEN, "report", ", or widen --since or --scope")
    lam, tools = _tools()
    lam.report(lam.recall({"task": "flaky"}).episode_id, Signal.SHIPPED)
    for _ in range(30):  # logged, not reported: reporting is what is missing
        lam.recall({"task": "flaky"})
    for scope, widen in ((None, ""), ({"task": "flaky"}, ", or widen scope or leave it out")):
        if scope:  # widening is advice only where the store holds enough episodes the scope left out
            for _ in range(30):
                lam.report(lam.recall({"task": "deploy"}).episode_id, Signal.SHIPPED)
        with pytest.raises(ToolError) as caught:
            tools.whatif(None, scope)
        said = str(caught.value)
        assert said.endswith("report more outcomes (report once the human's reaction to a recalled task is known)"
                             + widen) and "lamar" not in said and "since" not in said, said


def test_reworded_advice_to_call_again_is_found_by_its_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A lock held past the wait tells the model to call again; the server found that advice by its
    # words, so reworded it told the model the store had failed and to tell the user.
    import os

    from lamar.store.file_lock import exclusive, lock_writers

    monkeypatch.setattr("lamar.store.base.WRITER_AGAIN", "call again when the other writer has finished")
    lock = tmp_path / "store.json.lock"
    held = exclusive(lock, 0)
    assert held is not None
    try:
        with pytest.raises(StoreError) as refused:
            lock_writers(tmp_path / "store.json", lock, 0)
    finally:
        os.close(held)
    said = _said(refused.value)
    assert said == str(refused.value) and said.endswith("call again when the other writer has finished"), said


def test_a_reworded_writable_copy_advice_is_cut_by_its_value(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A store that cannot be written here says to open a writable copy, which a model cannot do; the
    # server cut that advice by its words, so reworded it reached the model.
    from lamar.store.base import ERASE_AFTER
    from lamar.store.sqlite_checks import unwritable

    monkeypatch.setattr("lamar.store.base.WRITABLE_COPY", "copy it somewhere it can be changed")
    store = SqliteStore(tmp_path / "store.db")
    try:
        store.read_only = True  # as a file this process may not write opens it
        for error in (StoreError(unwritable(store.path)),
                      advised(StoreError, f"lesson exp_1 was not erased: {unwritable(store.path)}; ", ERASE_AFTER)):
            said = _said(error, store)
            assert "cannot be written (read-only file, folder or mount); nothing was stored" in said, said
            assert "somewhere" not in said and "erase it again" not in said, said
    finally:
        store.close()
