"""What a Claude Code hook's answer to a prompt gave Claude, read against the episode the hook logged for it:
shared by the hook tests (tests/integrations/claude_code) and tests/test_portability.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def lessons_given(store: Path, session: str, stdout: bytes | str, prompt: str) -> str | None:
    """The additionalContext of the answer to `prompt`, the last event the hooks on `store` handled, in `session`;
    None when its episode injected nothing because the evidence coin held out every lesson it wanted.

    The hook opens `Lamar(store)` with a seed no test can set, and the coin holds each wanted cold lesson out of
    a few prompts in a hundred: a test that reads the answer alone fails on a correct, empty one. Any other
    empty answer fails here, with why: the prompt got no episode of its own (a budget run out, a failure: the
    session's episode is still an earlier prompt's), or its episode injected lessons that the answer lacks.
    """
    from lamar import Lamar
    from lamar_claude_code.outcomes import prompt_key

    state: dict[str, Any] = json.loads(store.with_name(store.name + ".claude-code.state.json").read_text())
    episode = state["sessions"][session]["episode"]
    record, last = state["episodes"][episode], state["last"]
    log = store.with_name(store.name + ".claude-code.log")
    told = log.read_text()[-2000:] if log.exists() else ""
    assert record["prompt_key"] == prompt_key(prompt), (
        f"the session's episode {episode} is an earlier prompt's: the hook stored none for {prompt!r}; log: {told}")
    assert (last["event"], last["session"], last["episode"], last["time"]) == (
        "UserPromptSubmit", session, episode, record["time"]), f"the prompt is not the hooks' last event: {last}"
    with Lamar(str(store)) as lam:
        logged = lam.episode(episode)
    text = stdout.decode() if isinstance(stdout, bytes) else stdout
    if not logged.injected:
        assert (text, last["injected"], record["injected"]) == ("", 0, []), (text, last, record)
        assert logged.held_out, f"{episode} injected nothing and held nothing out: no lesson was eligible"
        return None
    assert text, (f"{episode} injected lessons, but the answer is empty (delivered: {record['delivered']}); "
                  f"log: {told}")
    given: str = json.loads(text)["hookSpecificOutput"]["additionalContext"]
    assert (record["injected"], record["delivered"], last["injected"]) == (logged.injected, True, len(given))
    return given
