"""`strict_tool`: an MCP tool whose argument model refuses an argument the tool does not take, and whose text
arguments reach it as they were sent."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata
from mcp.types import ToolAnnotations
from pydantic import ConfigDict, ValidationError, model_validator
from pydantic_core import PydanticCustomError


class _StrictTool(Tool):
    """A tool whose refusal of an unknown argument reads as one sentence, like every other bad call."""

    async def run(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().run(*args, **kwargs)
        except ToolError as exc:
            # The SDK prints the whole ValidationError ("1 validation error for recallArguments ...
            # [type=...]"); the model needs only the sentence that says what to fix.
            cause = exc.__cause__
            if isinstance(cause, ValidationError) and cause.errors() and all(
                    error["type"] == "unknown_argument" for error in cause.errors()):
                raise ToolError(f"Error executing tool {self.name}: {cause.errors()[0]['msg']}") from cause
            raise


class _TextAsSent(FuncMetadata):
    """The SDK's argument handling, except that a text argument (`texts`) is never read as JSON.

    The SDK parses a string argument that holds JSON (an object, a list, null) for every parameter not
    annotated `str`, to undo the clients that send an object as a string; the tools take `Any`, so that
    their own checks word a refusal. A search for "null" then listed every lesson, and a task pasted as a
    JSON error was refused as no text: an argument the schema calls a string is kept as sent.
    """

    texts: frozenset[str] = frozenset()

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        parsed = super().pre_parse_json(data)
        return {key: data[key] if key in self.texts else value for key, value in parsed.items()}


def strict_tool(fn: Callable[..., Any], *, name: str, title: str, description: str | None,
                annotations: ToolAnnotations, required: Sequence[str] = (), parsed: Sequence[str] = ()) -> Tool:
    """The SDK's tool for `fn`, with an argument model that forbids extra arguments; its schema lists
    `required` as required, and an argument its schema calls a string reaches `fn` as sent, unless it is
    one of `parsed`, whose JSON the tool reads from the SDK's parse (an object or a list sent as a string).

    Pydantic ignores extra fields by default, so a misspelt `dryrun` would run the tool for real
    with `dry_run` left at its default. The refusal comes from the SDK's own validation step: the
    client gets a tool error naming the unknown argument and the ones the tool takes, nothing
    runs, and the advertised schema says `additionalProperties: false`.

    >>> def greet(who: str = "you") -> str:
    ...     return f"hello {who}"
    >>> tool = strict_tool(greet, name="greet", title="Greet", description="Say hello.",
    ...                    annotations=ToolAnnotations(read_only_hint=True))
    >>> tool.parameters["additionalProperties"]
    False
    >>> try: tool.fn_metadata.validate_arguments({"whom": "Ada"})
    ... except ValueError as exc: print(exc.errors()[0]["msg"])
    unknown argument 'whom': greet takes only who (check the spelling; nothing was done)
    """
    tool = Tool.from_function(fn, name=name, title=title, description=description, annotations=annotations)
    loose = tool.fn_metadata.arg_model
    known = [field.alias or key for key, field in loose.model_fields.items()]

    def known_only(cls: type[Any], data: Any) -> Any:
        unknown = [key for key in data if key not in known] if isinstance(data, dict) else []
        if unknown:
            takes = ", ".join(known) if known else "no arguments"
            raise PydanticCustomError("unknown_argument", "{message}", {"message": (
                f"unknown argument{'s' if len(unknown) > 1 else ''} {', '.join(repr(k) for k in unknown)}: "
                f"{name} takes only {takes} (check the spelling; nothing was done)")})
        return data

    # A subclass under the same name keeps the schema's title; hiding the input keeps the caller's
    # values (possibly a secret) out of the error text.
    strict = type(loose.__name__, (loose,), {
        "__module__": loose.__module__,
        "model_config": ConfigDict(extra="forbid", hide_input_in_errors=True),
        "known_only": model_validator(mode="before")(classmethod(known_only)),
    })
    fields = {key: getattr(tool, key) for key in Tool.model_fields}
    schema = strict.model_json_schema(by_alias=True)
    texts = frozenset(key for key, field in schema["properties"].items()
                      if field.get("type") == "string" and key not in parsed)
    metadata = _TextAsSent(**{**{key: getattr(tool.fn_metadata, key) for key in FuncMetadata.model_fields},
                              "arg_model": strict, "texts": texts})
    if required:
        # Advertised as required, for the client and the model; the function keeps its None
        # default, so a call without one gets the tool's sentence naming it, not a validator's.
        schema["required"] = list(required)
        for key in required:
            schema["properties"][key].pop("default", None)
    return _StrictTool(**{**fields, "fn_metadata": metadata, "parameters": schema})


__all__ = ["strict_tool"]
