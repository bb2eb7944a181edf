"""`LamarModel`: LamarState's keys for a graph whose state is a pydantic model, into which a TypedDict
such as LamarState cannot be mixed."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel

from lamar_langgraph.keys import last_outcome, last_value, merge_episodes, merge_turns, merge_waiting


class LamarModel(BaseModel):
    """The keys of `LamarState`, with the same reducers, as pydantic fields; subclass it for your state.

    ``class State(LamarModel): messages: Annotated[list[AnyMessage], add_messages] = []``

    Each key defaults to None, which the nodes read as a TypedDict's missing key (`lamar_context`
    None: the runtime context or `recall_node(context=...)` is used). The attributes are
    `LamarState`'s.
    """

    lamar_context: dict[str, str] | None = None
    lamar_turn: Annotated[str | None, last_value] = None
    lamar_turns: Annotated[dict[str, str] | None, merge_turns] = None
    lamar_episode_id: Annotated[str | None, last_value] = None
    lamar_lessons: Annotated[list[str] | None, last_value] = None
    lamar_prompt: Annotated[str | None, last_value] = None
    lamar_outcome: Annotated[str | float | None, last_outcome] = None
    lamar_reported: Annotated[str | None, last_value] = None
    lamar_episodes: Annotated[dict[str, str] | None, merge_episodes] = None
    lamar_waiting: Annotated[dict[str, str | float | None] | None, merge_waiting] = None
