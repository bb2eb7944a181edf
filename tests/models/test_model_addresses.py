"""A model's address can carry a password (https://user:password@proxy/...) or a key in its query:
the messages that name the address show neither."""

from __future__ import annotations

import socket
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


def _closed_port() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return int(free.getsockname()[1])


@pytest.mark.parametrize("scheme", ["http://", ""])  # the SDKs' HTTP clients read a proxy without one as http://
@pytest.mark.parametrize("provider", ["anthropic", "openai", "ollama"])
def test_a_proxy_that_is_down_is_named_not_only_the_server(monkeypatch: pytest.MonkeyPatch, provider: str,
                                                           scheme: str) -> None:
    """The SDKs send through the proxy the environment names: one that is down reads as the model
    server being down, so the message names the proxy and NO_PROXY, and only when one applies."""
    from lamar.models import from_spec

    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    proxy = f"{scheme}team:{_PASSWORD}@127.0.0.1:{_closed_port()}"
    monkeypatch.setenv("HTTP_PROXY", proxy)
    place = "host" if provider == "ollama" else "base_url"
    address = {place: f"http://127.0.0.1:{_closed_port()}"}
    keys = {} if provider == "ollama" else {"api_key": "sk-test", "max_retries": 0}
    with pytest.raises(ModelError, match=r"through the proxy http://team:\S+@127\.0\.0\.1.*NO_PROXY") as caught:
        from_spec(f"{provider}:m", **address, **keys).complete("hi")
    assert _PASSWORD not in str(caught.value)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with pytest.raises(ModelError, match="could not reach") as caught:
        from_spec(f"{provider}:m", **address, **keys).complete("hi")
    assert "proxy" not in str(caught.value)


def test_the_cause_the_openai_sdk_hides_is_said() -> None:
    """The openai SDK says only "Connection error."; the message adds what broke (a body cut short)."""
    def cut(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.RemoteProtocolError("peer closed connection without sending complete message body",
                                         request=request)

    with pytest.raises(ModelError, match="Connection error.; RemoteProtocolError: peer closed connection"):
        _openai(cut).complete("hi")


@pytest.mark.parametrize("provider", ["anthropic", "openai", "ollama", "ollama-import"])
def test_a_socks_proxy_without_socks_support_says_what_to_install(monkeypatch: pytest.MonkeyPatch,
                                                                   provider: str) -> None:
    """httpx raised a bare ImportError naming neither the variable nor the package to install in
    this interpreter; importing ollama (it builds a client) read as the ollama extra missing."""
    import sys

    from lamar.models import from_spec

    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)
    monkeypatch.setenv("ALL_PROXY", f"socks5://team:{_PASSWORD}@127.0.0.1:1080")
    monkeypatch.setitem(sys.modules, "socksio", None)  # `import socksio` fails, installed or not
    if provider == "ollama-import":
        for module in [name for name in sys.modules if name == "ollama" or name.startswith("ollama.")]:
            monkeypatch.delitem(sys.modules, module)
    keys = {} if provider.startswith("ollama") else {"api_key": "sk-test"}
    with pytest.raises(ModelError, match=r"SOCKS proxy \(ALL_PROXY=socks5://team:\[secure\]@127\.0\.0\.1:1080\)"
                                         r".* -m pip install socksio`, or set that variable to an http:// proxy"):
        from_spec(f"{provider.partition('-')[0]}:m", **keys)
