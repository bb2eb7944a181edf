"""The scripted fake model, the Model protocol, and `from_spec`."""

from __future__ import annotations

import pytest

from lamar import ModelError
from lamar.models import PROVIDERS, Model, ScriptedModel, from_spec
from lamar.models.anthropic import AnthropicModel
from lamar.models.ollama import OllamaModel
from lamar.models.openai import OpenAIModel


def test_scripted_replies_in_order_and_records_prompts() -> None:
    model = ScriptedModel(["one", "two"])
    assert isinstance(model, Model)
    assert [model.complete("a"), model.complete("b", max_tokens=9)] == ["one", "two"]
    assert model.prompts == ["a", "b"] and model.max_tokens == [2048, 9]
    with pytest.raises(ModelError, match="ran out of replies at call 3"):
        model.complete("c")


def test_scripted_from_a_function_and_scripted_failures() -> None:
    model = ScriptedModel(lambda prompt: f"len={len(prompt)}")
    assert model.complete("abcd") == "len=4"
    failing = ScriptedModel([ModelError("the model is down"), "fine"])
    with pytest.raises(ModelError, match="down"):
        failing.complete("x")
    assert failing.complete("y") == "fine"
    assert ScriptedModel("one reply").complete("x") == "one reply"


def test_from_spec_builds_each_adapter() -> None:
    assert PROVIDERS == ("anthropic", "openai", "openai-chat", "ollama")
    anthropic = from_spec("anthropic:claude-test", api_key="k")
    assert isinstance(anthropic, AnthropicModel) and anthropic.model == "claude-test"
    openai = from_spec("openai:gpt-test", api_key="k")
    assert isinstance(openai, OpenAIModel) and openai.api == "responses"
    chat = from_spec("openai-chat:local", api_key="k", base_url="http://localhost:8000/v1")
    assert isinstance(chat, OpenAIModel) and chat.api == "chat"
    local = from_spec("ollama:llama3.2:3b")
    assert isinstance(local, OllamaModel) and local.model == "llama3.2:3b"


def test_spaces_around_the_model_name_are_not_sent() -> None:
    # `lamar sleep --model "anthropic: claude-sonnet-4-5"`: the API knows no model " claude-sonnet-4-5".
    assert from_spec("anthropic: claude-test ", api_key="k").model == "claude-test"
    assert from_spec("ollama:\tllama3.2:3b\n").model == "llama3.2:3b"


@pytest.mark.parametrize("spec", ["claude", "anthropic:", ":model", "mystery:model"])
def test_from_spec_refuses_bad_specs(spec: str) -> None:
    with pytest.raises(ValueError, match="provider"):
        from_spec(spec)


@pytest.mark.parametrize(("spec", "hint"), [
    ("antropic:claude-test", "'anthropic:claude-test'"),
    ("openai_chat:local", "'openai-chat:local'"),
    ("Olama:qwen3:8b", "'ollama:qwen3:8b'"),
    ("claude-sonnet-4-5", "'anthropic:claude-sonnet-4-5'"),
    ("gpt-5-mini", "'openai:gpt-5-mini'"),
    ("llama3.2:3b", "'ollama:llama3.2:3b'"),
])
def test_a_misspelt_or_missing_provider_is_guessed(spec: str, hint: str) -> None:
    with pytest.raises(ValueError, match=f"did you mean {hint}"):
        from_spec(spec)


@pytest.mark.parametrize("spec", ["mystery:model", "ollama3.2:3b", "my-model"])
def test_no_guess_when_nothing_is_close(spec: str) -> None:
    with pytest.raises(ValueError, match="provider") as caught:
        from_spec(spec)
    assert "did you mean" not in str(caught.value)


def test_openai_chat_from_the_cli_reaches_the_server_in_openai_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--model` takes no address: docs/cli.md sends `openai-chat:` to a local server through
    OPENAI_BASE_URL, read by the SDK."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:8000/v1")
    monkeypatch.setenv("OPENAI_API_KEY", "none")
    model = from_spec("openai-chat:qwen3")
    assert isinstance(model, OpenAIModel) and str(model.client.base_url) == "http://localhost:8000/v1/"
