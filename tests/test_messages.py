"""Messages that name a type or a field read with the article it takes ("an int", "a str")."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from lamar import InvalidArgument, InvalidContext
from lamar._errors import a_or_an, echoed
from lamar.experience import context_within
from lamar.models.protocol import refuse_async
from lamar.storable import storable_problem
from lamar.store import Event
from lamar.store.base import stored_problem


@dataclasses.dataclass
class _Runtime:
    retries: int


class _Opaque:
    def __repr__(self) -> str:
        raise ValueError("cannot be written out")


class _Messages:
    async def create(self, **kwargs: Any) -> str:
        return ""


class _AsyncClient:
    messages = _Messages()


def test_a_message_naming_a_type_that_starts_with_a_vowel_says_an() -> None:
    with pytest.raises(InvalidContext, match=r"'retries' holds an int, not a string"):
        context_within(_Runtime(3), "lamar_context")
    assert storable_problem({"note": object()}) == ("holds an object, which is not JSON (use strings, numbers, "
                                                    "lists and dicts)")
    assert stored_problem(Event("episode", {"eligible": "exp_1"})) == ("holds an eligible that is a string, "
                                                                      "not a list")
    assert echoed(_Opaque()) == "an _Opaque that cannot be written out"
    with pytest.raises(InvalidArgument, match=r"pass an anthropic\.Anthropic instead"):
        refuse_async("Anthropic", _AsyncClient(), "messages.create", "anthropic.Anthropic")


@pytest.mark.parametrize(("word", "read"), [
    ("int", "an int"), ("Opaque", "an Opaque"), ("str", "a str"), ("UUID", "a UUID"), ("uint8", "a uint8"),
    ("EphemeralStore", "an EphemeralStore"), ("UserDict", "a UserDict"), ("", "a "),
])
def test_the_article_follows_the_sound_of_the_word(word: str, read: str) -> None:
    assert a_or_an(word) == read
