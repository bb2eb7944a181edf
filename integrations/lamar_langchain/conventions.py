"""The names Lamar's LangChain pieces agree on: metadata keys, state keys and the recall event;
and the tag and run name of LangChain's own that the callback handler reads."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from lamar.experience import context_within, fit_context

EXPERIENCE_ID = "experience_id"
"""Document metadata key naming the lesson a document stands for."""

EPISODE_ID = "episode_id"
"""Document metadata key naming the recall (episode) that chose the document."""

CONTEXT_KEY = "lamar_context"
"""`config["metadata"]` key through which a caller passes the context of one call."""

EPISODE_KEY = "lamar_episode_id"
"""State / output / run-metadata key holding an episode id (the middleware's state uses it)."""

RECALL_EVENT = "lamar_recall"
"""Name of the custom callback event sent after every recall, so that a callback handler
learns the episode even when nothing was injected (an all-held-out episode is still data)."""

RETRY_TAG = "retry:attempt:"
"""What LangChain's RunnableRetry tags each attempt after the first with (it sends no retry event)."""

FALLBACKS = "RunnableWithFallbacks"
"""The run name of LangChain's `with_fallbacks` unless renamed."""


def recall_event_data(episode_id: str, experience_ids: list[str], context: Mapping[str, str]) -> dict[str, Any]:
    """The payload of a `RECALL_EVENT`."""
    return {"episode_id": episode_id, "experience_ids": list(experience_ids), "context": dict(context)}


def context_from_metadata(metadata: Mapping[str, Any] | None, *,
                          warn: Callable[[str], object] | None = None) -> dict[str, str] | None:
    """The per-call context under `CONTEXT_KEY`, checked and fitted (`lamar.experience.fit_context`,
    which `warn` is handed to); None when absent."""
    if not metadata or metadata.get(CONTEXT_KEY) is None:
        return None
    return fit_context(metadata[CONTEXT_KEY], where=f"config['metadata'][{CONTEXT_KEY!r}]", warn=warn)


def context_from_runtime(runtime_context: Any, key: str = CONTEXT_KEY) -> dict[str, str] | None:
    """A graph's runtime context as a Lamar context (`lamar.experience.context_within`), fitted;
    None when absent."""
    found = context_within(runtime_context, key)
    return None if found is None else fit_context(found, where=f"the runtime context's {key!r}")
