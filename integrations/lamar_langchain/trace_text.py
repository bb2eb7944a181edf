"""Plain text of what went into and out of a LangChain run, for the sleep traces."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.documents import Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage, convert_to_messages

from lamar.recall import Recall
from lamar.sleep.trace_limits import clip_text
from lamar_langchain.conventions import EPISODE_ID, EPISODE_KEY, EXPERIENCE_ID


def input_text(inputs: Any) -> str:
    """What the user asked: the last human message, a lone string field, or the inputs as JSON."""
    human = _last(inputs, HumanMessage)
    if human is not None:
        return clip_text(human.text)
    return clip_text(_plain(inputs, ("input", "question", "query")))


def output_text(outputs: Any) -> str:
    """The final answer: the last AI message, a lone string field, or the outputs as JSON."""
    ai = _last(outputs, AIMessage)
    if ai is not None:
        return clip_text(ai.text)
    return clip_text(_plain(outputs, ("output", "answer", "result", "text")))


def episodes_in(value: Any) -> list[str]:
    """Episode ids carried by a run's outputs: state keys, lesson documents, Recall objects."""
    found: list[str] = []
    items = value if isinstance(value, (list, tuple)) else [value]
    for item in items:
        if isinstance(item, Recall):
            found.append(item.episode_id)
        elif isinstance(item, Document):
            episode = item.metadata.get(EPISODE_ID)
            if isinstance(episode, str) and item.metadata.get(EXPERIENCE_ID):
                found.append(episode)
        elif isinstance(item, Mapping):
            episode = item.get(EPISODE_KEY)
            if isinstance(episode, str) and episode:
                found.append(episode)
        elif isinstance(item, ToolMessage) and item.artifact is not None:  # create_lamar_tools' search
            found += episodes_in(item.artifact)
    return found


def _last(value: Any, kind: type[BaseMessage]) -> BaseMessage | None:
    if isinstance(value, Mapping):
        value = value.get("messages", value.get("output"))
    if isinstance(value, kind):
        return value
    if isinstance(value, Sequence) and not isinstance(value, str):
        try:  # a graph's input holds messages as dicts or (role, text) pairs too
            messages = convert_to_messages(value)
        except (ValueError, TypeError, NotImplementedError, KeyError):
            return None
        for item in reversed(messages):
            if isinstance(item, kind):
                return item
    return None


def _plain(value: Any, keys: tuple[str, ...]) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, BaseMessage):
        return value.text
    if isinstance(value, Mapping):
        for key in keys:
            if isinstance(value.get(key), str):
                return str(value[key])
        strings = [v for v in value.values() if isinstance(v, str)]
        if len(value) == 1 and strings:
            return strings[0]
    return json.dumps(value, default=str, ensure_ascii=False)
