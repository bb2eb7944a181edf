"""`from_spec`: build a model from a short "provider:model" string, as the CLI takes it."""

from __future__ import annotations

import difflib
from typing import Any

from lamar.models.protocol import Model

PROVIDERS = ("anthropic", "openai", "openai-chat", "ollama")


def from_spec(spec: str, **kwargs: Any) -> Model:
    """Build a model adapter from "provider:model".

    Providers: "anthropic", "openai" (Responses API), "openai-chat" (chat completions, for
    compatible servers; pass base_url=...), "ollama" (the model name may hold a colon, as in
    "ollama:llama3.2:3b").

    Args:
        spec: "provider:model".
        **kwargs: passed to the adapter (client=, api_key=, base_url=, host=, ...).

    Raises:
        ValueError: the spec has no provider or names an unknown one.
        ImportError: the provider's SDK is not installed (the message names the extra).

    >>> from_spec("mystery:model")
    Traceback (most recent call last):
    ...
    ValueError: unknown model provider 'mystery' in 'mystery:model'; use one of anthropic, openai, openai-chat, ollama
    """
    provider, sep, name = spec.partition(":") if isinstance(spec, str) else ("", "", "")
    provider = provider.strip().lower()
    name = name.strip()  # "anthropic: claude-sonnet-4-5", a pasted spec: the space is no part of the name
    if not sep or not name:
        raise ValueError(f"a model spec is 'provider:model', like 'anthropic:claude-sonnet-4-5'; got {spec!r}"
                         + _guess(spec if isinstance(spec, str) and not sep else ""))
    if provider == "anthropic":
        from lamar.models.anthropic import AnthropicModel

        return AnthropicModel(name, **kwargs)
    if provider in ("openai", "openai-chat"):
        from lamar.models.openai import OpenAIModel

        if provider == "openai-chat":
            kwargs.setdefault("api", "chat")
        return OpenAIModel(name, **kwargs)
    if provider == "ollama":
        from lamar.models.ollama import OllamaModel

        return OllamaModel(name, **kwargs)
    # A misspelt provider (letters only) is guessed; "llama3.2:3b" is a bare Ollama name, not a provider.
    lettered = provider.replace("-", "").replace("_", "").isalpha()
    near = difflib.get_close_matches(provider, PROVIDERS, n=1, cutoff=0.6) if lettered else []
    hint = _guess(spec) or (f" (did you mean '{near[0]}:{name}'?)" if near else "")
    raise ValueError(f"unknown model provider {provider!r} in {spec!r}{hint}; use one of {', '.join(PROVIDERS)}")


def _guess(name: str) -> str:
    """A provider for a bare model name whose family is unmistakable, as a hint."""
    bare = name.strip().lower()
    for prefix, provider in (("claude", "anthropic"), ("gpt-", "openai"), ("o1", "openai"), ("o3", "openai"),
                             ("o4", "openai"), ("llama", "ollama"),
                             ("qwen", "ollama"), ("gemma", "ollama"), ("mistral", "ollama"), ("deepseek", "ollama")):
        if bare.startswith(prefix):
            return f" (did you mean '{provider}:{name.strip()}'?)"
    return ""


__all__ = ["PROVIDERS", "from_spec"]
