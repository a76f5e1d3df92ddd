"""Provider SDK objects at the door: the one normalisation of the OpenAI and
Anthropic Python SDKs' messages, tool calls and content blocks into the plain
dicts the engine reads (the wire formats of "Implementation Details").

An agent loop keeps the SDK's own objects: ``response.choices[0].message``
(``ChatCompletionMessage``), its ``tool_calls``
(``ChatCompletionMessageToolCall``), an Anthropic ``Message`` or its
``content`` blocks (``TextBlock``, ``ToolUseBlock``...), possibly inside a dict
the loop builds (``{"role": "assistant", "content": response.content}``).
Every registration entry calls :func:`plain_sdk` once on what it receives, so
the rest of the engine sees dicts, lists and strings only. Nothing here imports
an SDK: an object is recognised by its shape.

- an object with a callable ``model_dump`` (the SDKs' pydantic models) becomes
  ``model_dump(mode="json", exclude_none=True)`` (a field that is None is the
  same to the engine as a missing one, and the SDKs fill many optional fields
  with None);
- any other object carrying message / tool-call / block attributes (``role``,
  ``type``, ``function``, or ``name`` with ``arguments``) becomes the dict of
  those of :data:`SDK_FIELDS` it has ("the attribute shape");
- dicts, lists and tuples are walked (to ``MAX_DEPTH`` levels, the depth of an
  Anthropic tool result inside a message) and copied only where something
  inside was converted: plain data comes back as the very same object, so the
  validators that follow see, and name, exactly what the caller passed.

What cannot be read this way (a ``model_dump`` that raises or returns no
mapping) is refused with :class:`WorkspaceArgumentError` naming the parameter.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ._errors import WorkspaceArgumentError
from ._records import ToolCall

__all__ = ["plain_sdk", "SDK_FIELDS", "MAX_DEPTH"]

#: Attributes read from an object of the attribute shape (no ``model_dump``):
#: the fields of OpenAI chat messages, tool calls and functions, and of
#: Anthropic messages and content blocks.
SDK_FIELDS = (
    "role", "content", "name", "tool_calls", "tool_call_id", "function_call", "refusal",
    "id", "type", "function", "arguments", "text", "input", "tool_use_id", "is_error",
    "thinking", "signature", "data", "source", "media_type",
)

#: How deep :func:`plain_sdk` looks for SDK objects inside plain containers: a
#: ``{"messages": [...]}`` document (0), its list (1), a message (2), its content
#: blocks or tool calls (3, 4), a call's function or a tool result's content (5),
#: the blocks inside that (6, 7), their source (8). An SDK object's own tree is
#: converted whole by its ``model_dump``.
MAX_DEPTH = 8

_SHAPE_MARKERS = ("role", "type", "function")
_SCALARS = (str, bytes, bytearray, int, float, bool, type(None))
#: The same types exactly: a set look-up before the isinstance checks.
_EXACT_SCALARS = frozenset(_SCALARS)


def plain_sdk(value: Any, parameter: str = "message") -> Any:
    """``value`` with every SDK object in it replaced by plain data (see the
    module docstring); plain input is returned unchanged (the same object).

    Parameters
    ----------
    value : Any
        A message, a list of messages or tool calls, a content block...
    parameter : str
        The name used in errors (the calling function's parameter).

    Raises
    ------
    WorkspaceArgumentError
        An object's ``model_dump()`` raised or did not return a mapping.
    """
    return _plain(value, parameter, 0)


def _plain(value: Any, parameter: str, depth: int) -> Any:
    kind = type(value)
    if kind in _EXACT_SCALARS or depth > MAX_DEPTH or isinstance(value, _SCALARS):
        return value
    if kind is dict:
        # Plain data (the usual input) comes back as it is: only values that
        # are not exact scalars are looked into, and nothing is copied unless
        # one of them changes.
        changed: dict[Any, Any] | None = None
        for k, v in value.items():
            if type(v) not in _EXACT_SCALARS:
                nv = _plain(v, parameter, depth + 1)
                if nv is not v:
                    if changed is None:
                        changed = {}
                    changed[k] = nv
        if changed is None:
            return value
        return {k: changed[k] if k in changed else v for k, v in value.items()}
    if kind is list or kind is tuple:
        items: list[Any] | None = None
        for i, v in enumerate(value):
            if type(v) not in _EXACT_SCALARS:
                nv = _plain(v, parameter, depth + 1)
                if nv is not v:
                    if items is None:
                        items = list(value)
                    items[i] = nv
        return value if items is None else items
    if isinstance(value, Mapping):
        out = {k: _plain(v, parameter, depth + 1) for k, v in value.items()}
        if all(out[k] is v for k, v in value.items()):
            return value
        return out
    if isinstance(value, (list, tuple)):
        items = [_plain(v, parameter, depth + 1) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return items
    if isinstance(value, ToolCall):
        return value  # the engine's own record passes as it is
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        try:
            data = dump(mode="json", exclude_none=True)
        except Exception as exc:  # noqa: BLE001 -- any failure of a foreign object
            raise WorkspaceArgumentError(
                parameter, value, f"must be a message object whose model_dump() works "
                f"(it raised {type(exc).__name__}: {exc})", "pass the message as a dict"
            ) from None
        if not isinstance(data, Mapping):
            raise WorkspaceArgumentError(
                parameter, value, "must be a message object whose model_dump() returns "
                f"a dict (it returned {type(data).__name__})", "pass the message as a dict")
        return _plain(dict(data), parameter, depth)
    if _has_shape(value):
        fields = {}
        for name in SDK_FIELDS:
            try:
                fields[name] = getattr(value, name)
            except Exception:  # noqa: BLE001 -- missing (or unreadable) is absent
                continue
        return _plain(fields, parameter, depth)
    return value


def _has_shape(value: Any) -> bool:
    """Whether ``value`` carries the attributes of a message, block or tool call."""
    try:
        if any(hasattr(value, marker) for marker in _SHAPE_MARKERS):
            return True
        return hasattr(value, "name") and hasattr(value, "arguments")
    except Exception:  # noqa: BLE001 -- a hostile __getattr__ is left to the validators
        return False
