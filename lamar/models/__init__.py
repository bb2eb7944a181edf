"""Models for sleep: the one-method `Model` protocol, a scripted fake, and adapters (`anthropic`,
`openai`, `ollama`) that import their SDK only when built, so the core keeps zero dependencies."""

from __future__ import annotations

from lamar.models.protocol import Model
from lamar.models.scripted import ScriptedModel
from lamar.models.spec import PROVIDERS, from_spec

__all__ = ["PROVIDERS", "Model", "ScriptedModel", "from_spec"]
