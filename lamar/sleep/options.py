"""Sleep's keyword options (`SleepOptions`), refused with InvalidArgument before any work."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict

from lamar._errors import InvalidArgument
from lamar.storable import finite_number, whole_number


class SleepOptions(TypedDict, total=False):
    """The keywords of `Lamar.sleep(traces, model, **options)`, each optional (`run_sleep` documents
    them and holds their defaults; tests/test_engine.py keeps the two in step)."""

    similarity: float
    keep_last: int | None
    older_than: float | None
    keep_unreported: int | None
    max_prompt_tokens: int
    max_tokens: int
    min_support: int
    model_timeout: float | None
    max_model_calls: int | None
    include_applied: bool
    include_rejected: bool


SLEEP_OPTIONS = tuple(SleepOptions.__annotations__)


def _whole(name: str, value: Any, low: int, *, none: bool = False) -> None:
    if value is None and none:
        return
    if not whole_number(value, low=low):
        more = " or None" if none else ""
        raise InvalidArgument(f"{name} must be a whole number >= {low}{more}; got {value!r}")


def _seconds(name: str, value: Any, *, positive: bool) -> None:
    if value is None:
        return
    if not finite_number(value) or \
            value < 0 or (positive and value == 0):
        raise InvalidArgument(f"{name} must be a number of seconds {'> 0' if positive else '>= 0'} or None; "
                              f"got {value!r}")


def check_sleep_options(*, similarity: Any, keep_last: Any, older_than: Any, keep_unreported: Any,
                        max_prompt_tokens: Any, max_tokens: Any, min_support: Any, model_timeout: Any,
                        max_model_calls: Any, model: Any) -> None:
    """Raise InvalidArgument naming the first option that is of the wrong type or out of range."""
    if not (finite_number(similarity) and 0.0 < similarity <= 1.0):
        raise InvalidArgument(f"similarity must be a number in (0, 1]; got {similarity!r}")
    _whole("keep_last", keep_last, 0, none=True)
    _whole("keep_unreported", keep_unreported, 0, none=True)
    _seconds("older_than", older_than, positive=False)
    _whole("max_prompt_tokens", max_prompt_tokens, 1)
    _whole("max_tokens", max_tokens, 1)
    _whole("min_support", min_support, 2)
    _seconds("model_timeout", model_timeout, positive=True)
    _whole("max_model_calls", max_model_calls, 1, none=True)
    check_model(model)


def check_model(model: Any) -> None:
    """Refuse a model without `complete`, saying what one is: a LangChain chat model is the usual mistake,
    and a LlamaIndex LLM, whose `complete` returns a CompletionResponse that mining could never read."""
    if _llamaindex_llm(model):
        raise InvalidArgument(f"model {type(model).__name__} is a LlamaIndex LLM: its complete() returns a "
                              "CompletionResponse, not the str sleep reads; wrap it and return the response's "
                              "text, as docs/llamaindex.md, \"Traces for sleep\" shows")
    if model is None or callable(getattr(model, "complete", None)):
        return
    runnable = callable(getattr(model, "invoke", None))
    hint = "; a LangChain chat model has none: wrap it as docs/sleep.md, \"Models\" shows" if runnable else ""
    raise InvalidArgument("model must have a complete(prompt, *, max_tokens) -> str method, as the adapters of "
                          "lamar.models have (AnthropicModel, OpenAIModel, OllamaModel, "
                          f"from_spec('anthropic:claude-sonnet-4-5')); got {type(model).__name__}{hint}")


def _llamaindex_llm(model: Any) -> bool:
    # By its base class's name and module: the core imports no framework to ask isinstance.
    return any(cls.__name__ == "BaseLLM" and cls.__module__.startswith("llama_index.")
               for cls in type(model).__mro__)


def known(options: Mapping[str, object]) -> None:
    """Refuse a keyword `Lamar.sleep` does not take, naming the ones it does."""
    unknown = sorted(set(options) - set(SLEEP_OPTIONS))
    if unknown:
        raise InvalidArgument(f"unknown sleep option {unknown[0]!r}; the options are {list(SLEEP_OPTIONS)}")


__all__ = ["SLEEP_OPTIONS", "SleepOptions", "check_model", "check_sleep_options", "known"]
