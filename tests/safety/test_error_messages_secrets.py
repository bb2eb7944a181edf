"""An error message is printed and logged: a credential passed where an id or a string belonged
is shown redacted, never whole."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from lamar import Experience, Lamar, LamarError, Signal
from lamar.cli.pairs import one_value_each

TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # a seeded fake in GitHub's shape
SLACK = "xoxb-1234567890123-1234567890123-" + "Zq8Rt2Yw6Ue4Io0Pa9Sd7Fg5"

CALLS: dict[str, Callable[[Lamar], Any]] = {
    "a context value of bytes": lambda lam: lam.recall({"auth": TOKEN.encode()}),
    "a token as a context key": lambda lam: lam.recall({TOKEN: 5}),
    "a token as a lesson id": lambda lam: lam.get(TOKEN),
    "a token as an episode id": lambda lam: lam.report(TOKEN, Signal.SHIPPED),
    "a token as a retired id": lambda lam: lam.retire(TOKEN),
    "a scope value of bytes":
        lambda lam: lam.add(Experience("the build fails", "clear it", scope={"k": TOKEN.encode()})),
    "a long id ending in a token": lambda lam: lam.get("x" * 500 + " " + SLACK),
    "a long id starting with a token": lambda lam: lam.get(SLACK + " " + "x" * 500),
}


@pytest.mark.parametrize("call", CALLS.values(), ids=CALLS.keys())
def test_an_error_message_never_shows_a_credential(call: Callable[[Lamar], Any]) -> None:
    with pytest.raises(LamarError) as raised:
        call(Lamar(":memory:", seed=1))
    said = str(raised.value)
    assert TOKEN[4:20] not in said and SLACK[-20:] not in said and SLACK[:30] not in said, said
    assert "[REDACTED:" in said


def test_a_key_given_two_tokens_is_refused_without_showing_them() -> None:
    with pytest.raises(LamarError) as raised:
        one_value_each([("token", TOKEN), ("token", TOKEN[:-1] + "Q")], "context")
    said = str(raised.value)
    assert TOKEN[4:20] not in said and "gives 'token' twice" in said and said.endswith("keep the one you mean")


def test_an_ordinary_value_is_still_echoed_whole() -> None:
    with pytest.raises(LamarError) as raised:
        Lamar().get("exp_3f9c2a1b")
    assert "'exp_3f9c2a1b'" in str(raised.value)
