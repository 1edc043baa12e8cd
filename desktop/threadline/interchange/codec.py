"""Dataclasses to JSON values and back, driven by their fields and type hints.

Threadline's own JSON format writes core records (``Message``, ``SessionInfo``) field
by field from ``dataclasses.fields``, so a field added to a record is exported without
anyone remembering to add it here; reading goes through the same type hints, so it is
read back too. Reading checks every value against its hint: the file is untrusted, and
a wrong type becomes a :class:`CodecError` naming where it is, never a half-built record
or a crash further in.

Supported hints: ``str``, ``int``, ``float``, ``bool``, ``None``, enums (by value),
``datetime`` (ISO 8601, naive taken as UTC), dataclasses (by field name; a field the
data lacks takes its default), ``tuple[X, ...]``, ``list[X]``, ``dict[str, X]`` and
unions such as ``X | None``.
"""

from __future__ import annotations

import dataclasses
import enum
import types
import typing
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

MAX_DEPTH = 32
"""Deepest nesting of records a file may hold (ours nest four deep)."""


class CodecError(ValueError):
    """A value that does not fit its field; the message names the field and what was wrong."""


def encode(value: Any) -> Any:
    """``value`` as plain JSON values (dict, list, str, int, float, bool, None)."""
    if value is None or isinstance(value, bool | int | float | str):
        return value.value if isinstance(value, enum.Enum) else value
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, datetime):
        return _utc(value).isoformat()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): encode(v) for k, v in value.items()}
    raise TypeError(f"cannot encode {type(value).__name__}")


def decode(hint: Any, data: Any, where: str = "", depth: int = 0) -> Any:
    """``data`` read as a value of type ``hint``; raises :class:`CodecError` when it does not fit."""
    if depth > MAX_DEPTH:
        raise CodecError(f"{where or 'value'}: nested too deeply")
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _decode_union(hint, data, where, depth)
    if hint is type(None) or hint is None:
        if data is not None:
            raise CodecError(f"{where}: expected null")
        return None
    if hint is Any:
        return data
    if origin in (tuple, list):
        return _decode_sequence(hint, origin, data, where, depth)
    if origin in (dict, Mapping, typing.Mapping):
        return _decode_mapping(hint, data, where, depth)
    if isinstance(hint, type):
        return _decode_plain(hint, data, where, depth)
    raise CodecError(f"{where}: unsupported field type {hint!r}")


def decode_record(cls: type[Any], data: Any, where: str = "", depth: int = 0) -> Any:
    """A dataclass from a JSON object; unknown keys are ignored, missing ones take defaults."""
    if not isinstance(data, dict):
        raise CodecError(f"{where or cls.__name__}: expected an object, got {_kind(data)}")
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        inner = f"{where}.{field.name}" if where else field.name
        if field.name in data:
            values[field.name] = decode(_hints(cls)[field.name], data[field.name], inner, depth + 1)
        elif field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
            raise CodecError(f"{inner}: missing")
    try:
        return cls(**values)
    except (TypeError, ValueError) as err:
        raise CodecError(f"{where or cls.__name__}: {err}") from None


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    return hints


def _decode_union(hint: Any, data: Any, where: str, depth: int) -> Any:
    options = typing.get_args(hint)
    if data is None and type(None) in options:
        return None
    errors = []
    for option in options:
        if option is type(None):
            continue
        try:
            return decode(option, data, where, depth)
        except CodecError as err:
            errors.append(str(err))
    raise CodecError(errors[0] if len(errors) == 1 else f"{where}: unexpected {_kind(data)}")


def _decode_sequence(hint: Any, origin: Any, data: Any, where: str, depth: int) -> Any:
    if not isinstance(data, list):
        raise CodecError(f"{where}: expected a list, got {_kind(data)}")
    args = typing.get_args(hint)
    item = args[0] if args else Any
    if origin is tuple and len(args) != 2 and args:
        raise CodecError(f"{where}: unsupported field type {hint!r}")
    values = [decode(item, v, f"{where}[{i}]", depth + 1) for i, v in enumerate(data)]
    return tuple(values) if origin is tuple else values


def _decode_mapping(hint: Any, data: Any, where: str, depth: int) -> Any:
    if not isinstance(data, dict):
        raise CodecError(f"{where}: expected an object, got {_kind(data)}")
    args = typing.get_args(hint)
    value_hint = args[1] if len(args) == 2 else Any
    return {str(k): decode(value_hint, v, f"{where}.{k}", depth + 1) for k, v in data.items()}


def _decode_plain(hint: type[Any], data: Any, where: str, depth: int) -> Any:
    if dataclasses.is_dataclass(hint):
        return decode_record(hint, data, where, depth)
    if issubclass(hint, enum.Enum):
        try:
            return hint(data)
        except ValueError:
            raise CodecError(f"{where}: unknown value {str(data)[:40]!r}") from None
    if hint is datetime:
        if not isinstance(data, str):
            raise CodecError(f"{where}: expected a date, got {_kind(data)}")
        try:
            return _utc(datetime.fromisoformat(data))
        except ValueError:
            raise CodecError(f"{where}: not a date: {data[:40]!r}") from None
    if hint is bool:
        if not isinstance(data, bool):
            raise CodecError(f"{where}: expected true or false, got {_kind(data)}")
        return data
    if hint is float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            raise CodecError(f"{where}: expected a number, got {_kind(data)}")
        return float(data)
    if hint is int or hint is str:
        if isinstance(data, bool) or not isinstance(data, hint):
            raise CodecError(
                f"{where}: expected {'a whole number' if hint is int else 'text'}, got {_kind(data)}"
            )
        return data
    raise CodecError(f"{where}: unsupported field type {hint.__name__}")


def _utc(value: datetime) -> datetime:
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _kind(data: Any) -> str:
    if data is None:
        return "null"
    return {dict: "an object", list: "a list", str: "text", bool: "true/false"}.get(type(data), "a number")
