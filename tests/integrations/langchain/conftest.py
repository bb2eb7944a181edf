"""Fixtures for the LangChain tests: a scripted chat model that records what it was sent."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatResult
from pydantic import Field


class RecordingChatModel(FakeMessagesListChatModel):
    """langchain-core's scripted fake, plus tool binding (create_agent needs it) and a record
    of every message list it received."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RecordingChatModel:
        return self  # the script already decides when to call a tool

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        self.received.append(list(messages))
        return super()._generate(messages, stop, run_manager, **kwargs)


@pytest.fixture
def chat_model() -> Callable[..., RecordingChatModel]:
    """Build a recording model from scripted replies (AIMessages or strings)."""

    def build(*replies: AIMessage | str) -> RecordingChatModel:
        messages = [r if isinstance(r, AIMessage) else AIMessage(content=r) for r in replies]
        return RecordingChatModel(responses=messages)

    return build
