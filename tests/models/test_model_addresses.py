"""A model's address can carry a password (https://user:password@proxy/...) or a key in its query:
the messages that name the address show neither."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from lamar import ModelError
from lamar.models.anthropic import AnthropicModel
from lamar.models.openai import OpenAIModel

_PASSWORD, _KEY = "hunter2-proxy-pass", "q7Zr9xKeyValue"
_BASE = f"https://team:{_PASSWORD}@proxy.example/llm/v1"


def _anthropic(handler: Any) -> AnthropicModel:
    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return AnthropicModel("claude-test", api_key="k", http_client=client, max_retries=0, base_url=_BASE,
                          default_query={"key": _KEY})


def _openai(handler: Any) -> OpenAIModel:
    client = httpx2.Client(transport=httpx2.MockTransport(handler))
    return OpenAIModel("local", api="chat", api_key="none", base_url=_BASE, http_client=client, max_retries=0,
                       default_query={"key": _KEY})


def _refused(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("connection refused", request=request)


@pytest.mark.parametrize("build", [_anthropic, _openai], ids=["anthropic", "openai"])
@pytest.mark.parametrize("handler", [
    lambda request: httpx2.Response(404, text="404 page not found"),
    _refused,
    lambda request: httpx2.Response(200, text="<html>log in</html>", headers={"content-type": "text/html"}),
], ids=["404", "unreachable", "not-the-api"])
def test_a_message_naming_the_address_shows_no_password_and_no_query_value(build: Any, handler: Any) -> None:
    with pytest.raises(ModelError) as caught:
        build(handler).complete("hi")
    said = str(caught.value)
    assert "proxy.example" in said, said  # the address is still named
    assert _PASSWORD not in said and _KEY not in said, said
